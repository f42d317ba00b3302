"""Reads two /metrics texts of one Ferry process, taken before and after a run, and prints how
long the run's transfers waited for decisions the receiver made (ferry_decision_pause_seconds,
decided_by="receiver"): the median, interpolated within its histogram bucket, and the share of
pauses within 5 ms (the issue's target for the median).

Usage: pause_histogram.py BEFORE AFTER
"""
import re
import sys

BUCKET = re.compile(r'^ferry_decision_pause_seconds_bucket\{(?P<labels>[^}]*)\} (?P<count>\S+)$')


def buckets(path):
    """Cumulative counts by upper bound (seconds), for decisions the receiver made."""
    counts = {}
    with open(path, encoding="utf-8") as text:
        for line in text:
            match = BUCKET.match(line.strip())
            if not match or 'decided_by="receiver"' not in match["labels"]:
                continue
            bound = re.search(r'le="([^"]+)"', match["labels"]).group(1)
            counts[float("inf") if bound == "+Inf" else float(bound)] = float(match["count"])
    return counts


def main():
    before, after = buckets(sys.argv[1]), buckets(sys.argv[2])
    run = sorted((bound, count - before.get(bound, 0)) for bound, count in after.items())
    total = run[-1][1] if run else 0
    if total == 0:
        print("no decision made by the receiver")
        return
    half, lower, below = total / 2, 0.0, 0.0
    median = None
    for bound, count in run:
        if count >= half:
            # Linear within the bucket, as Prometheus's histogram_quantile does.
            median = bound if bound == float("inf") else lower + (bound - lower) * (half - below) / max(count - below, 1)
            break
        lower, below = bound, count
    within_5ms = next((count for bound, count in run if bound == 0.005), 0)
    if median == float("inf"):
        print(f"median over {run[-2][0] * 1000:.0f} ms (the largest bucket), of {total:.0f} pauses")
        return
    print(f"median {median * 1000:.1f} ms (interpolated in its bucket), "
          f"{within_5ms / total * 100:.0f}% within 5 ms, of {total:.0f} pauses")


main()
