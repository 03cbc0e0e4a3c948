//! Every diagnostic the macros emit, and every `#[diagnostic::on_unimplemented]` message of the
//! device crate, has a compile-fail case: some `dynasoar/tests/ui/*.stderr` shows it.
//!
//! Messages are found in the sources: the message arguments of `syn::Error::new`,
//! `Error::new_spanned` and `meta.error`, in generated code (`quote!`) the messages of
//! `const _: () = assert!(..)`, `compile_error!` and generated traits' `on_unimplemented`, and
//! the `message = ".."` of the device crate's `on_unimplemented` traits (of those that some
//! other file names: a trait that is a bound nowhere cannot show its message). A message's
//! text outside its `{..}` placeholders must appear, in order, in one `.stderr`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

#[test]
fn every_diagnostic_has_a_compile_fail_case() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf();
    let mut messages = Vec::new();
    for file in rust_files(&root.join("dynasoar-macros/src")) {
        messages.extend(Finder::messages_of(&file));
    }
    let macro_messages = messages.len();
    for file in rust_files(&root.join("dynasoar-device/src")) {
        messages.extend(Finder::messages_of(&file));
    }
    // The extraction itself works: the macros have dozens of diagnostics, the device crate ten
    // or so `on_unimplemented` messages.
    let device_messages = messages.len() - macro_messages;
    assert!(macro_messages >= 40, "found only {macro_messages} diagnostics in dynasoar-macros");
    assert!(
        device_messages >= 8,
        "found only {device_messages} on_unimplemented messages in dynasoar-device"
    );

    // The sources that may name a trait (as a bound, so that its message can be shown).
    let sources: Vec<(PathBuf, String)> =
        ["dynasoar-device/src", "dynasoar-host/src", "dynasoar-macros/src", "dynasoar/src"]
            .iter()
            .flat_map(|dir| rust_files(&root.join(dir)))
            .map(|p| {
                let text = std::fs::read_to_string(&p).expect("readable source");
                (p, text)
            })
            .collect();
    let stderrs: Vec<(PathBuf, String)> = std::fs::read_dir(root.join("dynasoar/tests/ui"))
        .expect("dynasoar/tests/ui")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "stderr"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable .stderr");
            (p, text)
        })
        .collect();
    assert!(stderrs.len() >= 40, "found only {} .stderr files", stderrs.len());

    let mut missing = Vec::new();
    for m in &messages {
        // A trait that no other file names is a bound nowhere: its message cannot be shown
        // (yet: `DoWithoutArgument` waits for the host's `parallel_do` to take it).
        if let Some(name) = &m.trait_name
            && !sources.iter().any(|(path, text)| *path != m.file && names_word(text, name))
        {
            eprintln!("not checked: no other file names the trait `{name}`: {}", m.text);
            continue;
        }
        let parts = literal_parts(&m.text);
        if let Some((case, _)) = stderrs.iter().find(|(_, text)| contains_in_order(text, &parts)) {
            let case = case.file_stem().unwrap_or_default().to_string_lossy();
            eprintln!("{case}: {}", m.text);
        } else {
            missing.push(format!("{}: {}", m.file.strip_prefix(&root).unwrap_or(&m.file).display(), m.text));
        }
    }
    assert!(
        missing.is_empty(),
        "diagnostics without a compile-fail case in dynasoar/tests/ui (add a case, run \
         `TRYBUILD=overwrite cargo test -p dynasoar --test compile_fail`, read the .stderr):\n{}",
        missing.join("\n")
    );
}

/// Whether `text` contains `word` with no identifier character on either side.
fn names_word(text: &str, word: &str) -> bool {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(word).any(|(at, _)| {
        !ident(text[..at].chars().next_back()) && !ident(text[at + word.len()..].chars().next())
    })
}

/// A diagnostic message found in a source file.
struct Message {
    file: PathBuf,
    text: String,
    /// The trait whose `on_unimplemented` message it is (`None` for the macros' own messages).
    trait_name: Option<String>,
}

#[test]
fn a_message_matches_only_its_own_text() {
    let parts = literal_parts("class `{name}` is listed twice in allocator `{}`: list each class once");
    assert_eq!(parts, ["class `", "` is listed twice in allocator `", "`: list each class once"]);
    assert!(contains_in_order(
        "error: class `Body` is listed twice in allocator `Space`: list each class once",
        &parts
    ));
    assert!(!contains_in_order("error: class `Body` is listed twice in allocator `Space`", &parts));
    assert!(!contains_in_order(
        "`: list each class once ... class `Body` is listed twice in allocator `",
        &parts
    ));
    assert_eq!(literal_parts("`{{x}}` {a:?} b"), ["`{x}` ", " b"]);
}

/// The text of a format string outside its placeholders (`{{`/`}}` are braces).
fn literal_parts(message: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                parts.last_mut().expect("a part").push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                parts.last_mut().expect("a part").push('}');
            }
            '{' => {
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
                parts.push(String::new());
            }
            c => parts.last_mut().expect("a part").push(c),
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

/// Whether `text` contains `parts` one after the other (anything between them).
fn contains_in_order(text: &str, parts: &[String]) -> bool {
    let mut rest = text;
    for part in parts {
        match rest.find(part.as_str()) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The messages of one file.
#[derive(Default)]
struct Finder {
    /// `const NAME: &str = "..";`
    consts: HashMap<String, String>,
    /// `let name = <expr>;` (the last one of each name).
    lets: HashMap<String, syn::Expr>,
    /// Message expressions, in source order.
    exprs: Vec<syn::Expr>,
    /// Message names in generated code (`assert!(.., #name)`).
    names: Vec<String>,
    /// Message names of generated traits' `on_unimplemented` (`format!`s that make a
    /// `{Self}` placeholder with `{{Self}}`).
    trait_names: Vec<String>,
    /// `(trait, message)` of traits with `#[diagnostic::on_unimplemented(message = ..)]`.
    traits: Vec<(String, String)>,
    messages: Vec<String>,
}

impl Finder {
    fn messages_of(file: &Path) -> Vec<Message> {
        let source = std::fs::read_to_string(file).expect("readable source");
        let ast = syn::parse_file(&source).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut f = Finder::default();
        f.visit_file(&ast);
        let mut out = std::mem::take(&mut f.messages);
        for e in std::mem::take(&mut f.exprs) {
            f.strings_of(&e, &mut out);
        }
        for name in std::mem::take(&mut f.names) {
            f.resolve(&name, &mut out);
        }
        for name in std::mem::take(&mut f.trait_names) {
            let mut texts = Vec::new();
            f.resolve(&name, &mut texts);
            out.extend(texts.into_iter().map(|t| t.replace("{{Self}}", "{Self}")));
        }
        out.dedup();
        let own = out.into_iter().map(|text| Message { file: file.to_path_buf(), text, trait_name: None });
        let traits = f.traits.into_iter().map(|(name, text)| Message {
            file: file.to_path_buf(),
            text,
            trait_name: Some(name),
        });
        own.chain(traits).collect()
    }

    /// The message strings an expression makes.
    fn strings_of(&self, e: &syn::Expr, out: &mut Vec<String>) {
        match e {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => out.push(s.value()),
            syn::Expr::Macro(m) if m.mac.path.is_ident("format") => {
                let Some(TokenTree::Literal(lit)) = m.mac.tokens.clone().into_iter().next() else { return };
                let Ok(lit) = syn::parse_str::<syn::LitStr>(&lit.to_string()) else { return };
                let mut text = lit.value();
                // Named placeholders that are message constants (`{EFFECTS_SYNTAX}`): the
                // constant is a message, and part of this one.
                for (name, c) in &self.consts {
                    let placeholder = format!("{{{name}}}");
                    if text.contains(&placeholder) {
                        out.push(c.clone());
                        text = text.replace(&placeholder, &c.replace('{', "{{").replace('}', "}}"));
                    }
                }
                out.push(text);
            }
            syn::Expr::Path(p) => {
                if let Some(id) = p.path.get_ident() {
                    self.resolve(&id.to_string(), out);
                }
            }
            syn::Expr::Reference(r) => self.strings_of(&r.expr, out),
            syn::Expr::Paren(p) => self.strings_of(&p.expr, out),
            _ => {}
        }
    }

    fn resolve(&self, name: &str, out: &mut Vec<String>) {
        if let Some(c) = self.consts.get(name) {
            out.push(c.clone());
        } else if let Some(e) = self.lets.get(name) {
            self.strings_of(e, out);
        }
    }

    /// `const _: () = assert!(.., msg)` and `compile_error!(msg)` in generated code.
    fn scan_generated(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, t) in tokens.iter().enumerate() {
            if let [TokenTree::Ident(name), TokenTree::Punct(bang), TokenTree::Group(args)] =
                &tokens[i..tokens.len().min(i + 3)]
                && bang.as_char() == '!'
                && (name == "compile_error"
                    // Evaluated at compile time: `const _: () = assert!(..);` (other asserts
                    // are run-time checks).
                    || name == "assert"
                        && matches!(i.checked_sub(1).map(|j| &tokens[j]), Some(TokenTree::Punct(p)) if p.as_char() == '='))
            {
                let args: Vec<TokenTree> = args.stream().into_iter().collect();
                match args.as_slice() {
                    [.., TokenTree::Punct(hash), TokenTree::Ident(var)] if hash.as_char() == '#' => {
                        self.names.push(var.to_string())
                    }
                    [.., TokenTree::Literal(lit)] => {
                        if let Ok(s) = syn::parse_str::<syn::LitStr>(&lit.to_string()) {
                            self.messages.push(s.value());
                        }
                    }
                    _ => {}
                }
            }
            // `#[diagnostic::on_unimplemented(message = #name, ..)]` of a generated trait.
            if let [TokenTree::Ident(attr), TokenTree::Group(args)] = &tokens[i..tokens.len().min(i + 2)]
                && attr == "on_unimplemented"
            {
                let args: Vec<TokenTree> = args.stream().into_iter().collect();
                for (j, a) in args.iter().enumerate() {
                    if let TokenTree::Ident(key) = a
                        && key == "message"
                    {
                        match &args[j + 1..args.len().min(j + 4)] {
                            [TokenTree::Punct(_), TokenTree::Punct(hash), TokenTree::Ident(var), ..]
                                if hash.as_char() == '#' =>
                            {
                                self.trait_names.push(var.to_string())
                            }
                            [TokenTree::Punct(_), TokenTree::Literal(lit), ..] => {
                                if let Ok(s) = syn::parse_str::<syn::LitStr>(&lit.to_string()) {
                                    self.messages.push(s.value());
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            if let TokenTree::Group(g) = t {
                self.scan_generated(g.stream());
            }
        }
    }
}

impl<'a> Visit<'a> for Finder {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        // Unit tests are no diagnostics.
        let test = m
            .attrs
            .iter()
            .any(|a| a.path().is_ident("cfg") && a.meta.to_token_stream_string().contains("test"));
        if !test {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_const(&mut self, c: &'a syn::ItemConst) {
        if let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &*c.expr {
            self.consts.insert(c.ident.to_string(), s.value());
        }
        syn::visit::visit_item_const(self, c);
    }

    fn visit_local(&mut self, l: &'a syn::Local) {
        if let (syn::Pat::Ident(p), Some(init)) = (&l.pat, &l.init) {
            self.lets.insert(p.ident.to_string(), (*init.expr).clone());
        }
        syn::visit::visit_local(self, l);
    }

    fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
        if let syn::Expr::Path(p) = &*c.func {
            let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            let is_error = segments.ends_with(&["Error".into(), "new".into()])
                || segments.last().is_some_and(|s| s == "new_spanned");
            if is_error && let Some(message) = c.args.last() {
                self.exprs.push(message.clone());
            }
        }
        syn::visit::visit_expr_call(self, c);
    }

    fn visit_expr_method_call(&mut self, c: &'a syn::ExprMethodCall) {
        if c.method == "error"
            && let Some(message) = c.args.last()
        {
            self.exprs.push(message.clone());
        }
        syn::visit::visit_expr_method_call(self, c);
    }

    fn visit_macro(&mut self, m: &'a syn::Macro) {
        if m.path.is_ident("quote") || m.path.is_ident("quote_spanned") {
            self.scan_generated(m.tokens.clone());
        }
        syn::visit::visit_macro(self, m);
    }

    fn visit_item_trait(&mut self, t: &'a syn::ItemTrait) {
        for a in &t.attrs {
            let path: Vec<String> = a.path().segments.iter().map(|s| s.ident.to_string()).collect();
            if path == ["diagnostic", "on_unimplemented"] {
                let _ = a.parse_nested_meta(|meta| {
                    let value: syn::LitStr = meta.value()?.parse()?;
                    if meta.path.is_ident("message") {
                        self.traits.push((t.ident.to_string(), value.value()));
                    }
                    Ok(())
                });
            }
        }
        syn::visit::visit_item_trait(self, t);
    }
}

trait MetaText {
    fn to_token_stream_string(&self) -> String;
}

impl MetaText for syn::Meta {
    fn to_token_stream_string(&self) -> String {
        quote::ToTokens::to_token_stream(self).to_string()
    }
}
