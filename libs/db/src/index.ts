/**
 * @module @gatehouse/db
 * MikroORM per driver, per-service migrations, the transactional outbox and its relay, and the
 * legacy unique-index cleanup (ARCHITECTURE §4-§5, spec §9).
 */
export type { ClassMigration, Database, DatabaseOptions, DatabaseType, FunctionMigration, MigrationContext, MigrationDefinition, MongoAtomicity, Outbox, ServiceSchema } from './types.ts';
export { DATABASE_TYPES } from './types.ts';
export type { Column, ColumnType, Ddl, IndexOptions } from './ddl.ts';
export { createDdl, quoteIdentifier } from './ddl.ts';
export { openDatabase } from './open.ts';
export { databaseReadiness, databaseTarget } from './readiness.ts';
export { buildOrmOptions, DRIVER_PACKAGES } from './orm-options.ts';
export type { OutboxRelay, OutboxRelayOptions } from './relay.ts';
export { startOutboxRelay } from './relay.ts';
export type { RetentionCondition, RetentionRule, Sweeper, SweeperOptions } from './sweeper.ts';
export { retentionWhere, startSweeper, sweptCounter, SWEPT_METRIC } from './sweeper.ts';
export { dropLegacyUniqueIndexes } from './legacy.ts';
export type { ResealCount, Resealer, SealedColumn, SealedOutboxFields } from './reseal.ts';
export { deliveryJobFields, resealColumns, resealOutbox, startResealer } from './reseal.ts';
export type { ScratchDatabase, ScratchService } from './scratch.ts';
export { createScratchDatabase, openScratchService, reserveScratchDatabase } from './scratch.ts';
export { databaseOptionsOf } from './from-config.ts';
export { sqliteDataVersion } from './sqlite-shared.ts';
export type { PreparedRead } from './prepared.ts';
export { selectColumns } from './prepared.ts';
export type { AttemptSlot, AttemptSlots } from './attempt-slots.ts';
export { ATTEMPT_KEY_MAX_CHARS, ATTEMPT_SLOT_RETENTION_SECONDS, attemptSlotEntity, attemptSlotsTable, createMikroAttemptSlots } from './attempt-slots.ts';
