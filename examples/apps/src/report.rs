//! The machine-readable result line every app prints last:
//! `app=wa-tor backend=cuda allocator=dynasoar size=2048x2560 iters=500 total_us=... ...`.

use std::fmt::Display;

/// Builds one `key=value` line.
#[derive(Clone, Debug, Default)]
pub struct Report {
    fields: Vec<(String, String)>,
}

impl Report {
    /// A report for `app`.
    pub fn new(app: &str) -> Self {
        Report::default().field("app", app)
    }

    /// Add `key=value` (values must not contain spaces; they are replaced by `_`).
    pub fn field(mut self, key: &str, value: impl Display) -> Self {
        self.fields.push((key.to_string(), value.to_string().replace(' ', "_")));
        self
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The line.
    pub fn line(&self) -> String {
        self.fields.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }
}

impl Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_is_key_value_pairs() {
        let r = Report::new("nbody").field("backend", "cpu").field("size", "2 x 3");
        assert_eq!(r.line(), "app=nbody backend=cpu size=2_x_3");
        assert_eq!(r.get("backend"), Some("cpu"));
    }
}
