#!/usr/bin/env node
// The `gatehouse` CLI: `gatehouse <command> [flags]` (all, gateway, authn, mfa, admin, orgs, authz, notifications).
// Node 24 runs the TypeScript sources directly (type stripping).
import './cli.ts';
