#!/usr/bin/env bash
echo "conformance: not written yet" >&2; exit 1
