#!/usr/bin/env bash
# Accepts a change to placement's released versions: writes the OpenAPI
# document of each version, 1.0 to 1.39, into crates/placement/contracts/
# as the code makes it now. Review `git diff crates/placement/contracts`
# and commit it with the change; a BREAKING difference belongs in a new
# microversion instead.
set -euo pipefail
cd "$(dirname "$0")/.."
MICROVERSION_ACCEPT_CONTRACTS=1 cargo test -q -p placement --test contracts
git status --short crates/placement/contracts
