#!/usr/bin/env bash
# Pages per second: focuscrawl's fetcher vs Scrapy on the same loopback-served web, concurrency 64, no delay.
# usage: benchmarks/fetch_vs_scrapy.sh [WEB_DIR] [CONCURRENCY]
# Scrapy goes into its own environment (.bench-scrapy-venv), never into the project's.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
py="${FOCUSCRAWL_PYTHON:-$root/.venv/bin/python}"
web="${1:-$("$py" -c 'from focuscrawl.webs import embedded_web_dir; print(embedded_web_dir())')}"
concurrency="${2:-64}"
scrapy_venv="$root/.bench-scrapy-venv"
if [ ! -x "$scrapy_venv/bin/python" ]; then
  python3 -m venv "$scrapy_venv" && "$scrapy_venv/bin/pip" install -q "scrapy==2.19.0"
fi
web="$(realpath "$web")"  # the scripts run from the repository root, as the package benchmarks
cd "$root"
fc=$("$py" -m benchmarks.fetch_rate "$web" --concurrency "$concurrency" | tee /dev/stderr)
sc=$("$scrapy_venv/bin/python" -m benchmarks.scrapy_rate "$web" --focuscrawl-python "$py" --concurrency "$concurrency" | tee /dev/stderr)
rate() { sed -E 's/.*: ([0-9]+) pages\/s.*/\1/'; }
echo "focuscrawl / scrapy pages per second: $(echo "$fc" | rate) / $(echo "$sc" | rate) = $(python3 -c "print(round($(echo "$fc" | rate) / $(echo "$sc" | rate), 2))")"
