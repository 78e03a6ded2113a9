#!/usr/bin/env bash
# Copies the official AdCP request schemas the storefront embeds
# (internal/requestschema/official/schemas) from the spec folder
# (../shared/adcp-spec, or ADCP_SPEC_DIR): the release manifest and the
# $ref closure of every served task's request schema, byte for byte. Run it
# after a change of spec folder or of requestschema.Tasks, then commit.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./internal/requestschema -run TestVendored -count=1 -update >/dev/null || true
go test ./internal/requestschema -run TestVendored -count=1
