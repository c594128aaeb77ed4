#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/gpu_check.sh's last step: reads its step table and logs, writes
$OUT/gpu_check.json and prints the summary table (the last lines of the run).

  gpu_check_summary.py --work DIR --out DIR --start EPOCH --budget S
                       --allow-no-gpu 0|1 --prefix DIR --build DIR

Exit status 0 when the check passed: every step passed, the CUDA suite ran
and passed (not skipped), both sanitizers report no error, and every cuda_*
benchmark row has a time and a PyTorch time. With --allow-no-gpu 1 (a dry
run), what needs a GPU may be missing or skipped.
"""
import argparse
import json
import os
import re
import sys
import time

# The rows of bench/gpu_workloads.cpp, each also timed by bench/peers_torch.py.
BENCH_ROWS = [
    "cuda_matmul_f32_n1024", "cuda_matmul_f32_n4096", "cuda_matmul_f32_n8192",
    "cuda_exp_f32_8192x8192", "cuda_add_f32_8192x8192",
    "cuda_sum_f32_8192x8192", "cuda_sum_axis0_f32_8192x8192",
    "cuda_hessian_f64_n256", "cuda_jacrev_f32_n1024",
    "cuda_mlp_train_step_b128", "cuda_mlp_train_step_b4096",
]


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def steps_table(work):
    steps = []
    for line in read(os.path.join(work, "steps.tsv")).splitlines():
        f = line.split("\t")
        if len(f) < 6:
            continue
        steps.append({"name": f[0], "status": f[1],
                      "rc": int(f[2]) if f[2].lstrip("-").isdigit() else None,
                      "seconds": int(f[3]), "limit_s": int(f[4]),
                      "log": os.path.basename(f[5]) if f[5] else None})
    return steps


def env_info(work):
    env = {}
    for line in read(os.path.join(work, "env.txt")).splitlines():
        key, _, value = line.partition(": ")
        env[key.strip()] = value.strip()
    return env


def build_info(out, build):
    log = read(os.path.join(out, "build.log"))
    info = {"warnings": len(re.findall(r"\bwarning:", log)),
            "errors": len(re.findall(r"\berror\b", log))}
    # ninja's log: the slowest compile and link steps (milliseconds), for planning.
    last = {}  # .ninja_log appends: the last entry of each output is its latest build
    for line in read(os.path.join(build, ".ninja_log")).splitlines()[1:]:
        f = line.split("\t")
        if len(f) >= 4 and f[0].isdigit() and f[1].isdigit():
            last[f[3]] = int(f[1]) - int(f[0])
    edges = sorted(((ms, t) for t, ms in last.items()), reverse=True)
    info["steps"] = len(edges)
    info["slowest"] = [{"target": t, "seconds": round(ms / 1000, 1)} for ms, t in edges[:8]]
    info["cpu_seconds"] = round(sum(ms for ms, _ in edges) / 1000, 1)
    deps = {}
    for line in log.splitlines():
        if line.startswith("-- strata:") or "Found CUDAToolkit" in line:
            info.setdefault("configure", []).append(line.strip())
        m = re.match(r"^(\w+):[A-Z]+=(.*)$", line)
        if m:
            deps[m.group(1)] = m.group(2)
        elif line.startswith("ldd: "):
            deps.setdefault("ldd", []).append(line[5:].strip())
    info["deps"] = deps
    return info


DEVICE_SUITES = ("raw_cuda", "diff_cuda", "ad_cuda", "nn_cuda")
CTEST_LINE = re.compile(r"Test\s+#\d+:\s+(\S+)\s+\.*\s*(?:\*+)?\s*([A-Za-z][A-Za-z ]*?)\s+([\d.]+) sec")


def ctest_info(out):
    log = read(os.path.join(out, "ctest.log"))
    tests = {}
    for m in CTEST_LINE.finditer(log):
        tests[m.group(1)] = {"status": m.group(2).strip(), "seconds": float(m.group(3))}
    info = {"total": len(tests)}
    for key, status in (("passed", "Passed"), ("failed", None), ("skipped", "Skipped")):
        if status:
            names = [n for n, t in tests.items() if t["status"] == status]
        else:
            names = [n for n, t in tests.items() if t["status"] not in ("Passed", "Skipped")]
        info[key] = len(names)
        if key != "passed":
            info[key + "_tests"] = names
    info["cuda"] = tests.get("cuda", {}).get("status", "not run")
    # The CPU suites run again on cuda:0 (STRATA_TEST_DEVICE): required like "cuda".
    info["device_suites"] = {n: tests.get(n, {}).get("status", "not run") for n in DEVICE_SUITES}
    m = re.search(r"\d+% tests passed, \d+ tests failed out of \d+", log)
    info["summary"] = m.group(0) if m else None
    info["slowest"] = sorted(({"test": n, "seconds": t["seconds"]} for n, t in tests.items()),
                             key=lambda t: -t["seconds"])[:5]
    return info


def sanitizer_info(out, name):
    log = read(os.path.join(out, name + ".log"))
    info = {"runs": len(re.findall(r"^========= COMPUTE-SANITIZER", log, re.M))}
    errors = [int(x) for x in re.findall(r"ERROR SUMMARY: (\d+) error", log)]
    hazards = re.findall(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)",
                         log)
    if hazards:
        info["hazards"] = sum(int(h[0]) for h in hazards)
        info["errors"] = sum(int(h[1]) for h in hazards)
        info["warnings"] = sum(int(h[2]) for h in hazards)
    elif errors:
        info["errors"] = sum(errors)
    info["summaries"] = len(errors) + len(hazards)
    if "Device not supported" in log:
        info["note"] = "compute-sanitizer: Device not supported"
    return info


def bench_info(out):
    try:
        with open(os.path.join(out, "bench.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {"rows": [], "missing": BENCH_ROWS}
    rows = []
    for r in doc.get("results", []):
        row = {"name": r["name"], "strata_ms": r.get("median")}
        for p in r.get("peers", []):
            row[p["name"] + "_ms"] = p.get("median")
        for k in ("ratio", "gflops", "gb_per_s", "error", "peer_errors"):
            if k in r:
                row[k] = r[k]
        rows.append(row)
    have = {r["name"]: r for r in rows}
    info = {"rows": rows,
            "missing": [n for n in BENCH_ROWS if have.get(n, {}).get("strata_ms") is None],
            "without_pytorch": [n for n in BENCH_ROWS if n in have and "pytorch_ms" not in have[n]]}
    if "pytorch_config" in doc:
        info["pytorch_config"] = doc["pytorch_config"]
    return info


def fmt(v):
    return "-" if v is None else (f"{v:.4f}" if v < 1 else f"{v:.3f}" if v < 100 else f"{v:.1f}")


def main():
    ap = argparse.ArgumentParser()
    for a in ("--work", "--out", "--prefix", "--build"):
        ap.add_argument(a, required=True)
    ap.add_argument("--start", type=int, required=True)
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--allow-no-gpu", default="0")
    args = ap.parse_args()
    dry = args.allow_no_gpu == "1"

    steps = steps_table(args.work)
    doc = {"ok": False, "dry_run": dry, "seconds": int(time.time()) - args.start,
           "budget_s": args.budget, "env": env_info(args.work),
           "deps": {"prefix": args.prefix,
                    "manifest": [l for l in read(os.path.join(os.path.dirname(args.prefix), "MANIFEST"))
                                 .splitlines() if l and not l.startswith("#")]},
           "steps": steps, "build": build_info(args.out, args.build),
           "ctest": ctest_info(args.out), "memcheck": sanitizer_info(args.out, "memcheck"),
           "racecheck": sanitizer_info(args.out, "racecheck"), "bench": bench_info(args.out)}

    partial = {k: os.environ[k] for k in ("GPU_CHECK_BUILD_TARGETS", "GPU_CHECK_CTEST_ARGS")
               if os.environ.get(k)}
    if partial:
        doc["partial"] = partial
    problems = []
    if partial and not dry:
        problems.append("a partial run (" + ", ".join(f"{k}={v}" for k, v in partial.items()) + ")")
    by_name = {s["name"]: s for s in steps}
    for s in steps:
        if s["status"] == "passed" or s["status"] == "present":
            continue
        if dry and s["name"] in ("memcheck", "racecheck_reduce", "racecheck_rest", "racecheck"):
            continue  # no GPU, or no compute-sanitizer, in a dry run
        problems.append(f"step {s['name']}: {s['status']}")
    for needed in ("configure", "build", "ctest", "bench"):
        if needed not in by_name:
            problems.append(f"step {needed}: not reached")
    if doc["ctest"].get("failed"):
        problems.append("tests failed: " + ", ".join(doc["ctest"]["failed_tests"]))
    if doc["ctest"]["cuda"] != "Passed" and not dry:
        problems.append(f"the CUDA suite: {doc['ctest']['cuda']} (it must run and pass)")
    for name, status in doc["ctest"].get("device_suites", {}).items():
        if status != "Passed" and not dry:
            problems.append(f"the {name} suite: {status} (it must run and pass)")
    for tool in ("memcheck", "racecheck"):
        if doc[tool].get("errors"):
            problems.append(f"{tool}: {doc[tool]['errors']} error(s)")
        elif not dry and doc[tool].get("summaries", 0) == 0:
            problems.append(f"{tool}: no summary in its log")
    if not dry:
        if doc["bench"]["missing"]:
            problems.append("benchmark rows missing: " + ", ".join(doc["bench"]["missing"]))
        if doc["bench"].get("without_pytorch"):
            problems.append("rows without PyTorch: " + ", ".join(doc["bench"]["without_pytorch"]))
    doc["problems"] = problems
    doc["ok"] = not problems
    with open(os.path.join(args.out, "gpu_check.json"), "w") as f:
        json.dump(doc, f, indent=1)

    print("\n== gpu_check summary" + (" (dry run: no GPU needed)" if dry else "")
          + (f" (partial: {partial})" if partial else ""))
    print(f"gpu: {doc['env'].get('gpu', '?')}")
    for s in steps:
        print(f"  {s['name']:<18} {s['status']:<8} {s['seconds']:>4} s   {s['log'] or ''}")
    c = doc["ctest"]
    print(f"ctest: {c['summary']}; cuda suite {c['cuda']}; on cuda:0 {c.get('device_suites')};"
          f" skipped {c.get('skipped_tests')};"
          f" failed {c.get('failed_tests')}")
    for tool in ("memcheck", "racecheck"):
        t = doc[tool]
        print(f"{tool}: {t.get('errors', '-')} errors in {t.get('summaries', 0)} summaries"
              + (f", {t['hazards']} hazards" if "hazards" in t else "") + (f" ({t['note']})" if "note" in t else ""))
    rows = doc["bench"]["rows"]
    if rows:
        peers = sorted({k[:-3] for r in rows for k in r if k.endswith("_ms") and k != "strata_ms"})
        print(f"\n{'workload':<28} {'strata':>9}" + "".join(f" {p:>9}" for p in peers) + "   ms (medians)")
        for r in rows:
            line = f"{r['name']:<28} {fmt(r.get('strata_ms')):>9}"
            line += "".join(f" {fmt(r.get(p + '_ms')):>9}" for p in peers)
            if "error" in r:
                line += "  error: " + r["error"]
            print(line)
    print(f"\ntotal {doc['seconds']} s of a {args.budget} s budget; results in {args.out}")
    print("gpu_check: " + ("PASSED" if doc["ok"] else "FAILED: " + "; ".join(problems)))
    return 0 if doc["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
