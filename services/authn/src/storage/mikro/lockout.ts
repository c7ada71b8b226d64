/**
 * @module @gatehouse/authn/storage/mikro/lockout
 * LoginLockout on `authn_attempt_slots`: each attempt claims a slot by one conditional write, so
 * concurrent attempts on any number of replicas are admitted exactly up to the allowance (issue 30 §1).
 */
import { slotAttemptLog } from '@gatehouse/auth';
import { createMikroAttemptSlots, type Database } from '@gatehouse/db';
import type { LoginLockout } from '../ports.ts';
import { AttemptSlotEntity } from './entities.ts';

/** The login lockout (and authn's send caps) on `db`'s `authn_attempt_slots`. */
export function createMikroLoginLockout(db: Database): LoginLockout {
  return slotAttemptLog(createMikroAttemptSlots(db, AttemptSlotEntity));
}
