"""Summarise the apps' machine-readable lines (app=... key=value ...) into one table with the
original CUDA DynaSOAr's figures for comparison: measured on one H200 (CUDA 13, driver
580.159.04) on 2026-11-26, built with -std=c++17 -Xptxas -dlcm=cg, default sizes, wall time of
the app's own timer, as given in issue 26 (we cannot run the original on this machine)."""
import sys

# app: (the original's DynaSOAr version, the original's SOA baseline), as issue 26 gives them.
ORIGINAL = {
    "nbody": ("22.48 s", "23.21 s"),
    "collision": ("23.44 s", "29.91 s"),
    "wa-tor": ("1.067 s (cell-less 0.824)", "0.386 s"),
    "game-of-life": ("0.594 s (utm, cell-less)", "0.098 s"),
    "sugarscape": ("23.01 s (cell-less)", "7.07 s"),
    "structure": ("16.26 s", "3.99 s"),
    "traffic": ("no finish in 40 s", "5.64 s"),
    "generation": ("57.38 s", "-"),
    "barnes-hut": ("no finish in 100 s", "-"),
}

rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("app="):
        continue
    kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
    rows.setdefault(kv["app"], {})[kv.get("allocator", "?")] = kv

print()
print(f"{'app':<14} {'dynasoar s':>10} {'enum s':>8} {'soa s':>8} {'aos s':>8} {'vs soa':>7}  "
      f"{'original (H200, 2026-11-26, issue 26)':<38} original's SOA")
for app, by in rows.items():
    d = by.get("dynasoar")
    if not d:
        continue
    t = lambda k: float(by[k]["total_us"]) / 1e6 if k in by else float("nan")
    print(f"{app:<14} {t('dynasoar'):>10.3f} {float(d.get('enum_us', 0)) / 1e6:>8.3f} {t('soa'):>8.3f} {t('aos'):>8.3f} "
          f"{t('dynasoar') / t('soa'):>6.2f}x  {ORIGINAL.get(app, ('-', '-'))[0]:<38} {ORIGINAL.get(app, ('-', '-'))[1]}")
