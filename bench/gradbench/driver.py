#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs GradBench's evals against tools, offline, without GradBench's Rust driver.

GradBench (github.com/gradbench/gradbench) runs each eval and each tool as two processes
speaking JSON lines: the eval sends a message (start, define, evaluate, analysis, end), the
driver passes it to the tool's stdin, passes the tool's one-line response back to the eval,
and logs both. This script does the same relay, for every (eval, tool) pair asked for, and
writes what it saw:

  <out>/gradbench/<eval>/<tool>.jsonl   every message and response, GradBench's log format
                                        ({"elapsed": {"nanoseconds"}, "message"|"response"})
  <out>/gradbench.json                  one record per evaluation: eval, function, input
                                        description, tool, median of the "evaluate" timings,
                                        the eval's own verdict (analysis) and error
  stdout                                a table: eval x input x function, each tool's time,
                                        strata's ratio to the fastest, the verdicts

GradBench's checkout is used read-only: the evals' Python modules, the `manual` tool's
sources (built here, in a scratch copy under <out>, because the evals validate against it)
and the `pytorch` tool. Every process runs on one thread (OMP/MKL/OpenBLAS = 1).
"""
import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

# Evals each tool implements (GradBench's tools/<tool>/evals.txt, strata's own list).
EVALS = ["hello", "lse", "llsq", "det", "ode", "gmm", "kmeans", "ba", "ht", "lstm",
         "particle", "saddle"]

# Arguments per eval for each preset. "smoke": one small input, validated (make test);
# "medium": inputs that fit a run of every eval with three tools in under an hour on two
# loaded cores; "full": the evals' own defaults (ht without its absent 12th input).
PRESETS = {
    "smoke": {
        "hello": [],
        "gmm": ["-d", "2", "-k", "5", "-n", "1000"],
        "lse": ["-n", "1000"],
    },
    "medium": {
        "hello": [],
        "lse": ["-n", "2500", "40000", "640000"],
        "llsq": ["-n", "16", "128", "1024", "4096"],
        "det": ["-l", "5", "6", "7", "8"],
        "ode": ["-n", "1000", "10000", "-s", "1", "10"],
        "gmm": ["-d", "2", "10", "20", "32", "-k", "5", "10", "25", "50"],
        "kmeans": ["-k", "10", "100", "-n", "1000", "10000", "-d", "8", "16"],
        "ba": ["--min", "1", "--max", "5"],
        "ht": ["--min", "1", "--max", "5"],
        "lstm": ["-l", "2", "4", "-c", "1024", "4096"],
        "particle": [],
        "saddle": [],
    },
    "full": {e: [] for e in EVALS} | {"ht": ["--max", "11"]},
}

ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


class Timeout(Exception):
    pass


def read_line(proc, deadline, who):
    """One line from proc's stdout before the deadline (monotonic seconds), or Timeout."""
    out = proc.stdout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Timeout(f"{who} sent nothing before the deadline")
        ready, _, _ = select.select([out], [], [], left)
        if ready:
            line = out.readline()
            if line == "":
                raise EOFError(f"{who} closed its output (exit status {proc.poll()})")
            return line


def tool_command(tool, args):
    if tool == "strata":
        return [str(args.strata_bin)]
    if (args.out / "gradbench-work" / "tools" / tool / "Makefile").exists():  # manual, finite
        return [args.python, "python/gradbench/gradbench/cpp.py", tool]
    return [args.python, f"python/gradbench/gradbench/tools/{tool}/run.py"]


def tool_evals(tool, work):
    if tool == "strata":
        return set(EVALS)
    listing = work / "tools" / tool / "evals.txt"
    # A second word ("gmm timeout") marks an eval the tool does not finish in GradBench's runs.
    listed = {line.split()[0] for line in listing.read_text().splitlines()
              if len(line.split()) == 1}
    if tool == "finite":
        # Finite differences are the baseline only where no hand-written derivative exists
        # (particle and saddle, whose nested derivatives the manual tool does not implement).
        listed -= tool_evals("manual", work)
    return listed


def prepare_work(gradbench, work):
    """A scratch GradBench root: links to the read-only checkout, a writable tools/manual."""
    work.mkdir(parents=True, exist_ok=True)
    for part in ["python", "evals", "cpp"]:
        link = work / part
        if not link.exists():
            link.symlink_to(gradbench / part)
    tools = work / "tools"
    tools.mkdir(exist_ok=True)
    for tool in ["manual", "finite", "pytorch"]:
        dest = tools / tool
        if not dest.exists():
            shutil.copytree(gradbench / "tools" / tool, dest)
            for p in [dest, *dest.rglob("*")]:
                p.chmod(p.stat().st_mode | 0o200)


def run_pair(eval_name, eval_args, tool, args, work, log_dir):
    """Relays one eval against one tool; returns the evaluation records and the outcome."""
    env = os.environ | ONE_THREAD | {"PYTHONPATH": str(work / "python" / "gradbench")}
    eval_cmd = [args.python, f"python/gradbench/gradbench/evals/{eval_name}/run.py",
                *eval_args, "--min-runs", str(args.min_runs), "--min-seconds",
                str(args.min_seconds)]
    if eval_name == "hello":
        eval_cmd = eval_cmd[:2]  # hello takes no arguments
    log_dir.mkdir(parents=True, exist_ok=True)
    log = open(log_dir / f"{tool}.jsonl", "w")
    start = time.monotonic_ns()
    ev = subprocess.Popen(eval_cmd, cwd=work, env=env, text=True, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE)
    tl = subprocess.Popen(tool_command(tool, args), cwd=work, env=env,
                          text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    records, pending, outcome = {}, {}, "success"
    deadline = time.monotonic() + args.timeout
    try:
        while True:
            try:
                line = read_line(ev, deadline, f"the {eval_name} eval")
            except EOFError:
                break  # GradBench's Python evals end by exiting, without an "end" message
            message = json.loads(line)
            log.write(json.dumps({"elapsed": {"nanoseconds": time.monotonic_ns() - start},
                                  "message": message}) + "\n")
            if message["kind"] == "end":
                break
            if message["kind"] == "analysis" and message["of"] in pending:
                rec = pending.pop(message["of"])
                rec["valid"] = message["valid"]
                rec["error"] = message.get("error")
            tl.stdin.write(json.dumps(message) + "\n")
            tl.stdin.flush()
            reply = read_line(tl, deadline, f"the {tool} tool")
            response = json.loads(reply)
            log.write(json.dumps({"elapsed": {"nanoseconds": time.monotonic_ns() - start},
                                  "response": response}) + "\n")
            log.flush()
            if response.get("id") != message["id"]:
                raise ValueError(f"{tool} answered message {message['id']} with id "
                                 f"{response.get('id')}")
            kind = message["kind"]
            if kind == "define" and not response.get("success", False):
                outcome = "undefined"
                print(f"  {eval_name} / {tool}: define failed: "
                      f"{str(response.get('error', ''))[:300]}", file=sys.stderr)
            if kind == "evaluate":
                ns = [t["nanoseconds"] for t in response.get("timings") or []
                      if t["name"] == "evaluate"]
                rec = {"eval": eval_name, "tool": tool, "function": message["function"],
                       "input": message.get("description", json.dumps(message["input"])),
                       "success": response.get("success", False),
                       "runs": len(ns), "seconds": statistics.median(ns) / 1e9 if ns else None,
                       "valid": None, "error": response.get("error")}
                records[message["id"]] = rec
                pending[message["id"]] = rec
                if not rec["success"]:
                    outcome = "failure"
                    print(f"  {eval_name} / {tool}: {message['function']} "
                          f"{rec['input']} failed: {str(rec['error'])[:300]}", file=sys.stderr)
            ev.stdin.write(reply if reply.endswith("\n") else reply + "\n")
            ev.stdin.flush()
    except Timeout as e:
        outcome = "timeout"
        print(f"  {eval_name} / {tool}: timeout after {args.timeout} s ({e})", file=sys.stderr)
    except (EOFError, ValueError, BrokenPipeError) as e:
        outcome = "error"
        print(f"  {eval_name} / {tool}: {e}", file=sys.stderr)
    finally:
        for p in (tl, ev):
            try:
                p.stdin.close()
            except BrokenPipeError:
                pass
        for p in (tl, ev):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()
    if ev.returncode != 0 and outcome == "success":
        outcome = f"eval exited {ev.returncode}"
    if any(r["valid"] is False for r in records.values()) and outcome == "success":
        outcome = "invalid"
    return list(records.values()), outcome


def fmt_time(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def verdict(rec):
    if rec is None:
        return "-"
    if not rec["success"]:
        return "fail"
    return {True: "ok", False: "INVALID", None: "?"}[rec["valid"]]


def table(records, tools):
    rows = {}
    for r in records:
        rows.setdefault((r["eval"], r["input"], r["function"]), {})[r["tool"]] = r
    head = ["eval", "input", "function"] + [f"{t}" for t in tools] + ["strata/fastest",
                                                                       "verdicts"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (e, inp, fn), by_tool in rows.items():
        times = {t: by_tool[t]["seconds"] for t in tools
                 if t in by_tool and by_tool[t]["success"] and by_tool[t]["seconds"]}
        ratio = "-"
        if "strata" in times:
            ratio = f"{times['strata'] / min(times.values()):.2f}"
        cells = [e, inp, fn] + [fmt_time(times.get(t)) for t in tools] + [
            ratio, " ".join(f"{t}:{verdict(by_tool.get(t))}" for t in tools if t in by_tool)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gradbench", type=Path,
                        default=here.parent.parent.parent / "shared/reference/gradbench",
                        help="a GradBench checkout (read-only is fine)")
    parser.add_argument("--strata-bin", type=Path, required=True,
                        help="strata's tool, the strata_gradbench executable")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="the Python with the evals' modules (Debian's: numpy, scipy, "
                        "pydantic, dataclasses-json, torch)")
    parser.add_argument("--out", type=Path, default=Path("build/bench"))
    parser.add_argument("--tools", nargs="+", default=["strata", "manual", "pytorch", "finite"])
    parser.add_argument("--evals", nargs="+", default=None, help="default: the preset's")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="medium")
    parser.add_argument("--min-runs", type=int, default=1)
    parser.add_argument("--min-seconds", type=float, default=0.5)
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds one (eval, tool) pair may take in all")
    parser.add_argument("--json", type=Path, default=None,
                        help="default: <out>/gradbench.json")
    parser.add_argument("--merge", type=Path, nargs="+", default=None,
                        help="run nothing: join the records of earlier runs' JSON files "
                        "(e.g. tools run one after the other) into --json and print the table")
    parser.add_argument("--skip-missing", action="store_true",
                        help="exit 77 (a skip for ctest), saying why, when the checkout or "
                        "the evals' Python modules are missing")
    args = parser.parse_args()
    # The tools run with the scratch GradBench root as their working directory.
    args.strata_bin = args.strata_bin.resolve()
    args.out = args.out.resolve()

    if args.merge:
        records, outcomes = [], {}
        for f in args.merge:
            run = json.loads(f.read_text())
            records += run["records"]
            outcomes |= run["outcomes"]
        return report(records, outcomes, args)

    missing = 77 if args.skip_missing else 2
    gradbench = args.gradbench.resolve()
    if not (gradbench / "python/gradbench/gradbench/eval.py").exists():
        print(f"SKIPPED: no GradBench checkout at {gradbench}: clone github.com/gradbench/"
              f"gradbench there, or pass --gradbench (cmake -DSTRATA_GRADBENCH=<path>)",
              file=sys.stderr)
        return missing
    modules = ["numpy", "scipy", "pydantic"] + (["torch", "dataclasses_json"]
                                                if "pytorch" in args.tools else [])
    probe = subprocess.run([args.python, "-c", "import " + ", ".join(modules)],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIPPED: {args.python} cannot import the evals' modules ({', '.join(modules)})"
              f": run `make gradbench-deps`\n{probe.stderr.strip()}", file=sys.stderr)
        return missing
    work = (args.out / "gradbench-work").resolve()
    prepare_work(gradbench, work)
    preset = PRESETS[args.preset]
    evals = args.evals or list(preset)
    # The evals validate every tool against the manual tool's binaries: build them first
    # (once; the scratch copy keeps them), as GradBench's eval images do.
    manual = tool_evals("manual", work)
    bins = [f"bin/{e}" for e in evals if e in manual]
    if bins:
        made = subprocess.run(["make", "-C", str(work / "tools/manual"), *bins],
                              capture_output=True, text=True)
        if made.returncode != 0:
            print(f"driver.py: building GradBench's manual tool failed:\n{made.stdout}"
                  f"{made.stderr}", file=sys.stderr)
            return 2
    records, outcomes = [], {}
    for e in evals:
        for tool in args.tools:
            if e not in tool_evals(tool, work):
                continue
            t0 = time.monotonic()
            recs, outcome = run_pair(e, preset.get(e, []), tool, args, work,
                                     args.out / "gradbench" / e)
            records += recs
            outcomes[f"{e}/{tool}"] = outcome
            print(f"{e:9} {tool:8} {outcome:10} {len(recs):3} evaluations "
                  f"{time.monotonic() - t0:7.1f} s", flush=True)
    return report(records, outcomes, args)


def report(records, outcomes, args):
    """Writes the JSON, prints the table; 1 unless every (eval, tool) pair succeeded."""
    out_json = args.json or args.out / "gradbench.json"
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps({"preset": args.preset, "min_runs": args.min_runs,
                                    "min_seconds": args.min_seconds, "outcomes": outcomes,
                                    "records": records}, indent=1))
    print()
    tools = [t for t in args.tools if any(r["tool"] == t for r in records)]
    print(table(records, tools))
    print(f"\nwritten: {out_json}")
    bad = [k for k, v in outcomes.items() if v != "success"]
    if bad:
        print("not successful: " + ", ".join(f"{k} ({outcomes[k]})" for k in bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
