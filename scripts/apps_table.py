"""Summarise the apps' machine-readable lines (app=... key=value ...) into one table with the
original CUDA DynaSOAr's figures on an H200 (from the project's issues) for comparison."""
import sys

# Original DynaSOAr (CUDA 13, sm_90, H200): total seconds, or None where it does not finish
# (figures in parentheses: rebuilt with -Xptxas -dlcm=cg, as quoted in the issues).
ORIGINAL = {
    "nbody": "22.41 s",
    "collision": "23.26 s",
    "wa-tor": "hangs (1.04 s with -dlcm=cg)",
    "game-of-life": "hangs (0.587 s cell-less with -dlcm=cg)",
    "sugarscape": "hangs (21.98 s with -dlcm=cg)",
    "structure": "hangs (15.63 s with -dlcm=cg)",
    "traffic": "hangs (also with -dlcm=cg)",
}

rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("app="):
        continue
    kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
    rows.setdefault(kv["app"], {})[kv.get("allocator", "?")] = kv

print()
print(f"{'app':<14} {'dynasoar s':>10} {'enum s':>8} {'soa s':>8} {'aos s':>8} {'vs soa':>7}  original DynaSOAr on H200")
for app, by in rows.items():
    d = by.get("dynasoar")
    if not d:
        continue
    t = lambda k: float(by[k]["total_us"]) / 1e6 if k in by else float("nan")
    print(f"{app:<14} {t('dynasoar'):>10.3f} {float(d.get('enum_us', 0)) / 1e6:>8.3f} {t('soa'):>8.3f} {t('aos'):>8.3f} "
          f"{t('dynasoar') / t('soa'):>6.2f}x  {ORIGINAL.get(app, '-')}")
