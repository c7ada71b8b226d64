/**
 * @module bin/cli
 * `gatehouse <command> [flags]`: `all` runs every service and the gateway in one process; `gateway`
 * and each service name run one process of split mode (ARCHITECTURE §1). Flags are the only
 * configuration (spec §1); `gatehouse <command> --help` lists them.
 */
// only the command list: the flag registry and everything a command runs load after the command is known,
// so `gatehouse --help` answers without them (`--version` is answered by gatehouse.mjs)
import { COMMAND_SUMMARY, COMMANDS, type CommandName } from '@gatehouse/config/commands';
import type { LogLevel } from '@gatehouse/observability';

const USAGE = `usage: gatehouse <command> [flags]

commands:
${COMMANDS.map((c) => `  ${c.padEnd(15)}${COMMAND_SUMMARY[c]}`).join('\n')}
  ${'reseal'.padEnd(15)}re-seal every value sealed under an older --encryption-key with the first one, print the counts, exit (the flags of \`all\`)

Run \`gatehouse <command> --help\` for that command's flags, \`gatehouse --version\` for the version.
`;

const [command, ...argv] = process.argv.slice(2);

if (!command || command === '--help' || command === '-h' || command === 'help') {
  process.stdout.write(USAGE);
  process.exit(command ? 0 : 2);
}
if (command === 'reseal') {
  const { runReseal } = await import('./reseal.ts');
  process.exit(await runReseal(argv));
}
if (!(COMMANDS as readonly string[]).includes(command)) {
  process.stderr.write(`FATAL: unknown command "${command}"\n${USAGE}`);
  process.exit(2);
}
const name = command as CommandName;
if (argv.includes('--help') || argv.includes('-h')) {
  const { helpText } = await import('@gatehouse/config');
  process.stdout.write(helpText(name));
  process.exit(0);
}

// issue 38 §0: with more than one HTTP worker the process started only supervises the workers it forks,
// each of which runs this same command line (gateway/src/workers.ts)
let supervising = false;
if (name === 'all' || name === 'gateway') {
  const { default: cluster } = await import('node:cluster');
  if (cluster.isPrimary) {
    const [{ loadConfigOrExit }, workers] = await Promise.all([import('@gatehouse/config'), import('../gateway/src/workers.ts')]);
    const { config } = loadConfigOrExit(name, argv);
    const count = workers.httpWorkerCount(config);
    if (count > 1) {
      supervising = true;
      const { createLogger } = await import('@gatehouse/observability');
      await workers.superviseHttpWorkers(config, count, createLogger(config.logLevel as LogLevel, undefined, config.logFormat).child({ service: 'supervisor' }));
    }
  }
}

if (supervising) {
  // the workers serve; this process only forks, restarts and stops them
} else if (name === 'all') {
  const { runAllInOne } = await import('./all.ts');
  await runAllInOne(argv);
} else if (name === 'gateway') {
  const { runGateway } = await import('../gateway/src/main.ts');
  await runGateway(argv);
} else {
  // every service runs the same way in split mode: its registry module through runService
  const [{ SERVICES }, { runService }] = await Promise.all([import('../services/registry.ts'), import('@gatehouse/service')]);
  const module = SERVICES.find((m) => m.name === name);
  if (!module) {
    process.stderr.write(`FATAL: the ${name} service is not in services/registry.ts\n`);
    process.exit(1);
  }
  await runService(module, argv);
}
// Start-up allocated far more than stays live, and V8 keeps what it grew into: hand it back once the
// process serves (issue 22 §3; @gatehouse/observability's memory module)
const { scheduleMemoryRelease } = await import('@gatehouse/observability');
scheduleMemoryRelease();
