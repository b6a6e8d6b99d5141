#!/usr/bin/env python3
"""Two builds of `anvil-hook` side by side on the same mid-debate phase, in one sitting.

    python3 benches/hook-ab.py BEFORE/anvil-hook AFTER/anvil-hook AFTER/anvil [SAMPLES]

With `ANVIL_AB_POSITIONS=1`, every phase ends with a position and two open points, as in the
hook bench's positions case. With `ANVIL_AB_SYNTHESIS=1`, the stop timed is the synthesis's
(the debate advanced through round 3, the synthesis out): its commit and the report written
at the end.

It then times the no-debate path the same way: a stop of a session that drives no debate, in
a project that has `.anvil/` (the hook's answer at the end of every turn of every session).

`cargo bench --bench hook` times one build; on a machine that others share, two runs of it
minutes apart differ by more than a small change does. This prepares one debate (3 rounds,
~7.5 KB phases, advanced to round 3's advocate, as the bench does), copies it once per sample
and build, and runs the two builds' stops alternately (which one goes first alternates too).
It prints the medians of wall time and of CPU time (user + system, which waiting for a busy
machine's cores does not inflate), and their ratios. Both builds must read the same record
format.
"""

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SESSION = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9"


def phase(label, size, round_):
    text = label + "\n\n"
    while len(text) < size:
        text += "lorem ipsum dolor sit amet consectetur "
    if os.environ.get("ANVIL_AB_POSITIONS"):
        text += (
            f'\n\n<anvil-position stance="for" confidence="0.{9 - round_}">Billing should move, '
            "with a staged cut-over</anvil-position>\n<anvil-open>Who pays for the second "
            "region?</anvil-open>\n<anvil-open>No rollback plan for the cut-over</anvil-open>\n"
        )
    return text


def stop_input(project, text):
    return json.dumps(
        {
            "session_id": SESSION,
            "cwd": project,
            "hook_event_name": "Stop",
            "stop_hook_active": True,
            "last_assistant_message": text,
        }
    ).encode()


def report(label, samples, before, after, wall, cpu):
    for what, times in [("wall", wall), ("cpu (user+sys)", cpu)]:
        b, a = statistics.median(times[before]), statistics.median(times[after])
        print(
            f"{label}, {what}, median of {samples}: before {b:.3f} ms, "
            f"after {a:.3f} ms (after/before {a / b:.3f})"
        )


def main():
    before, after, anvil = (os.path.abspath(p) for p in sys.argv[1:4])
    samples = int(sys.argv[4]) if len(sys.argv) > 4 else 201
    work = tempfile.mkdtemp(prefix="anvil-hook-ab-")
    try:
        template = os.path.join(work, "template")
        os.makedirs(template)
        run = lambda args, stdin=None: subprocess.run(
            args, cwd=template, input=stdin, capture_output=True, check=True
        )
        run([anvil, "init"])
        run([anvil, "start", "Should we?", "--rounds", "3", "--session", SESSION])
        synthesis = bool(os.environ.get("ANVIL_AB_SYNTHESIS"))
        labels = ["ADVOCATE round 1", "CRITIC round 1", "ADVOCATE round 2", "CRITIC round 2"]
        if synthesis:
            labels += ["ADVOCATE round 3", "CRITIC round 3"]
        for label in labels:
            run([after, "stop"], stop_input(template, phase(label, 7500, int(label[-1]))))
        pairs = []
        for i in range(samples):
            pair = (os.path.join(work, f"before-{i}"), os.path.join(work, f"after-{i}"))
            for copy in pair:
                shutil.copytree(template, copy, symlinks=True)
            pairs.append(pair)
        # The copies reach the disk first, so that their write-back is not what gets timed.
        subprocess.run(["sync"])
        time.sleep(1)
        text = phase("SYNTHESIS", 7500, 3) if synthesis else phase("ADVOCATE round 3", 7500, 3)
        what_stop = "synthesis (commit and report)" if synthesis else "mid-debate phase"
        wall = {before: [], after: []}
        cpu = {before: [], after: []}
        for i, (b, a) in enumerate(pairs):
            order = [(before, b), (after, a)] if i % 2 == 0 else [(after, a), (before, b)]
            for program, project in order:
                data = stop_input(project, text)
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                began = time.perf_counter()
                done = subprocess.run([program, "stop"], cwd=project, input=data, capture_output=True)
                wall[program].append((time.perf_counter() - began) * 1000)
                now = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[program].append(
                    (now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime) * 1000
                )
                # Each stop records the phase and hands out the critic's prompt, or ends the
                # debate with its report.
                assert done.returncode == 0, done
                if synthesis:
                    reports = os.path.join(project, ".anvil", "reports")
                    assert os.listdir(reports), done
                else:
                    assert b"Critic" in done.stdout, done
        report(what_stop, samples, before, after, wall, cpu)

        # The no-debate path: one project, stops of a session bound to nothing.
        quiet = os.path.join(work, "quiet")
        os.makedirs(quiet)
        subprocess.run([anvil, "init"], cwd=quiet, capture_output=True, check=True)
        data = json.dumps(
            {
                "session_id": "7f0e1d2c-3b4a-4596-8877-665544332211",
                "cwd": quiet,
                "hook_event_name": "Stop",
                "stop_hook_active": False,
                "last_assistant_message": "Nothing to do with a debate.",
            }
        ).encode()
        wall = {before: [], after: []}
        cpu = {before: [], after: []}
        for i in range(samples):
            order = [before, after] if i % 2 == 0 else [after, before]
            for program in order:
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                began = time.perf_counter()
                done = subprocess.run([program, "stop"], cwd=quiet, input=data, capture_output=True)
                wall[program].append((time.perf_counter() - began) * 1000)
                now = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[program].append(
                    (now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime) * 1000
                )
                assert done.returncode == 0, done
        report("no-debate path", samples, before, after, wall, cpu)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
