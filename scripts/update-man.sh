#!/usr/bin/env bash
# Regenerates man/*.1 from the clap definitions (tests/njx/man.rs checks they match).
set -euo pipefail
cd "$(dirname "$0")/.."
NJX_UPDATE_MAN=1 cargo test --quiet --test njx man::
