/**
 * @module bin/cli
 * `gatehouse <command> [flags]`: `all` runs every service and the gateway in one process; `gateway`
 * and each service name run one process of split mode (ARCHITECTURE §1). Flags are the only
 * configuration (spec §1); `gatehouse <command> --help` lists them.
 */
import { COMMANDS, helpText, type CommandName } from '@gatehouse/config';

const USAGE = `usage: gatehouse <command> [flags]

commands:
  all            every service and the gateway in one process (embedded SQLite by default in npm start)
  gateway        the edge: /v1 REST, /graphql, public gRPC (split mode)
  authn          users, passwords, sessions, tokens (split mode)
  authz          the relationship engine (split mode)
  mfa            MFA sessions and one-time codes: verify_otp, resend_otp (split mode)
  notifications  the email worker (split mode)
  admin, orgs    not part of this release yet

Run \`gatehouse <command> --help\` for that command's flags.
`;

const [command, ...argv] = process.argv.slice(2);

if (!command || command === '--help' || command === '-h' || command === 'help') {
  process.stdout.write(USAGE);
  process.exit(command ? 0 : 2);
}
if (!(COMMANDS as readonly string[]).includes(command)) {
  process.stderr.write(`FATAL: unknown command "${command}"\n${USAGE}`);
  process.exit(2);
}
const name = command as CommandName;
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(helpText(name));
  process.exit(0);
}

switch (name) {
  case 'all': {
    const { runAllInOne } = await import('./all.ts');
    await runAllInOne(argv);
    break;
  }
  case 'gateway': {
    const { runGateway } = await import('../gateway/src/main.ts');
    await runGateway(argv);
    break;
  }
  case 'authn': {
    const { runAuthn } = await import('../services/authn/src/main.ts');
    await runAuthn(argv);
    break;
  }
  case 'authz': {
    const { runAuthz } = await import('../services/authz/src/main.ts');
    await runAuthz(argv);
    break;
  }
  case 'notifications': {
    const { runNotifications } = await import('../services/notifications/src/main.ts');
    await runNotifications(argv);
    break;
  }
  case 'mfa': {
    const { runMfa } = await import('../services/mfa/src/main.ts');
    await runMfa(argv);
    break;
  }
  case 'admin':
  case 'orgs':
    process.stderr.write(`FATAL: the ${name} service is not part of this release yet (see README, known gaps)\n`);
    process.exit(1);
}
