#!/usr/bin/env node
// The container image's HEALTHCHECK (Dockerfile): exits 0 when the Gatehouse process in this container
// answers `GET /healthz` with 200 within 3 s, else 1. Liveness only, like the chart's livenessProbe:
// /healthz never looks at dependencies (/readyz does).
//
// Every command (all, gateway, authn, …) serves /healthz on its HTTP listener, whose port and interface
// are flags (--http-port, default 8080; --host, default 0.0.0.0). The check reads them from the running
// process's own arguments (/proc/<pid>/cmdline, the same PID namespace), so one HEALTHCHECK fits every
// command and any --http-port. Plain JavaScript with no imports from the repo, so it starts in
// milliseconds. The slim base image has no curl or wget.
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import process from 'node:process';

/**
 * The argument vector of the container's `gatehouse` process: PID 1 when it runs as the entrypoint,
 * else (`podman run --init`, a shell wrapper) the first process whose arguments name bin/gatehouse.mjs.
 * @returns {string[]} argv after the script path, or [] when none is found
 */
function gatehouseArgs() {
  const pids = ['1', ...readdirSync('/proc').filter((p) => /^\d+$/.test(p) && p !== '1' && p !== String(process.pid))];
  for (const pid of pids) {
    let argv;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const at = argv.findIndex((a) => a.endsWith('gatehouse.mjs'));
    if (at >= 0) return argv.slice(at + 1);
  }
  return [];
}

/**
 * The value of a flag given as `--name value` or `--name=value`; the last one wins, as with commander.
 * @param {string[]} argv the process's arguments
 * @param {string} name the flag with its dashes, e.g. `--http-port`
 * @returns {string | undefined}
 */
function flag(argv, name) {
  let value;
  argv.forEach((a, i) => {
    if (a === name && i + 1 < argv.length) value = argv[i + 1];
    else if (a.startsWith(`${name}=`)) value = a.slice(name.length + 1);
  });
  return value;
}

const argv = gatehouseArgs();
const port = Number(flag(argv, '--http-port') ?? 8080);
const bound = flag(argv, '--host') ?? '0.0.0.0';
// A wildcard listener is reached on loopback; a listener on one address only on that address.
const host = bound === '0.0.0.0' || bound === '::' || bound === '' ? '127.0.0.1' : bound;

const req = request({ host, port, path: '/healthz', method: 'GET', timeout: 3000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => { process.stderr.write(`healthcheck: no answer from ${host}:${port} in 3 s\n`); process.exit(1); });
req.on('error', (err) => { process.stderr.write(`healthcheck: ${host}:${port}: ${err.message}\n`); process.exit(1); });
req.end();
