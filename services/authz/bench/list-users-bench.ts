/**
 * @module list-users-bench
 * ListUsers in process, on the drive dataset of the OpenFGA side-by-side bench (`drive-dataset.ts`): the
 * users that can view (and edit) a random document, through the engine on a memory store, so the figure is
 * the engine's own cost without HTTP or a database. Prints p50/p99 per call and the mean number of users
 * answered. Run: `npm run bench:list-users [-- --tuples=200000 --calls=500]`.
 */
import { createEngine } from '../src/domain/index.ts';
import { createMemoryStore } from '../src/storage/memory.ts';
import { DRIVE_MODEL, driveDataset } from './drive-dataset.ts';
import { prng } from './github-dataset.ts';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')) as Array<[string, string]>);
const TUPLES = Number(args['tuples'] ?? 200_000);
const CALLS = Number(args['calls'] ?? 500);

const { tuples, documents } = driveDataset(TUPLES);
const store = createMemoryStore();
const engine = createEngine({ store });
await engine.writeModel(DRIVE_MODEL);
for (let i = 0; i < tuples.length; i += 100) await engine.writeTuples(tuples.slice(i, i + 100));
await engine.warm();

const rnd = prng(11);
for (const relation of ['viewer', 'editor']) {
  // warm-up: the first calls pay for lazily built structures
  for (let i = 0; i < 20; i++) await engine.listUsers({ object: `document:d${Math.floor(rnd() * documents)}`, relation, user_type: 'user' });
  const times: number[] = [];
  let answered = 0;
  for (let i = 0; i < CALLS; i++) {
    const object = `document:d${Math.floor(rnd() * documents)}`;
    const t0 = process.hrtime.bigint();
    const { users } = await engine.listUsers({ object, relation, user_type: 'user' });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    answered += users.length;
  }
  times.sort((a, b) => a - b);
  const q = (p: number): string => (times[Math.min(times.length - 1, Math.floor(times.length * p))] ?? NaN).toFixed(3);
  console.log(`ListUsers document#${relation} at ${TUPLES} tuples: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, ${(answered / CALLS).toFixed(1)} users per answer (${CALLS} calls)`);
}
