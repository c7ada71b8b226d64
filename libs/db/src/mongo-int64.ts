/**
 * @module @gatehouse/db/mongo-int64
 * int64 columns on MongoDB (issue 32 §4): MikroORM's `bigint` type writes a decimal string whatever its
 * mode, which on MongoDB makes `created_at: "1700000000"` a string that range queries and sorts treat
 * apart from numbers (BSON comparison order puts every number before every string). On MongoDB the
 * entities' `bigint` properties are given {@link MongoInt64Type} instead, and
 * {@link convertInt64Strings} turns the strings stored by earlier versions into numbers once.
 */
import { BigIntType, Type } from '@mikro-orm/core';
import type { EntitySchema, MikroORM } from '@mikro-orm/core';
import type { Logger } from '@gatehouse/observability';

/**
 * A `bigint` column as MongoDB stores it: a BSON number (int32, or double for values past 2^31,
 * exact up to 2^53, which bounds every time and counter Gatehouse keeps). Reads accept the decimal
 * strings earlier versions stored (`Number("1700000000")`), so a document not yet converted reads alike.
 */
export class MongoInt64Type extends Type<number | null | undefined, number | null | undefined> {
  override convertToDatabaseValue(value: unknown): number | null | undefined {
    return value === null || value === undefined ? value : Number(value);
  }

  override convertToJSValue(value: unknown): number | null | undefined {
    return value === null || value === undefined ? value : Number(value);
  }

  override compareAsType(): string {
    return 'number';
  }

  override get runtimeType(): string {
    return 'number';
  }
}

/**
 * Gives every `bigint` property of `schema` the {@link MongoInt64Type} (in place, like the key mapping
 * of `openDatabase`); returns the field names whose stored strings {@link convertInt64Strings} converts
 * (every one but the primary key).
 */
export function int64AsNumbers(schema: EntitySchema<any, any>): string[] {
  const fields: string[] = [];
  for (const [name, prop] of Object.entries(schema.meta.properties as unknown as Record<string, Record<string, unknown>>)) {
    const int64 = [prop.type, prop.customType].some((t) => t instanceof BigIntType || t instanceof MongoInt64Type);
    if (!int64) continue;
    prop.type = new MongoInt64Type();
    delete prop.customType;
    prop.runtimeType = 'number';
    // a key is stored as a number from now on, but MongoDB never changes an `_id`: not converted
    if (prop.primary !== true) fields.push(String(prop.fieldName ?? name));
  }
  return fields;
}

/** The marker of {@link convertInt64Strings} in `<service>_migrations`. */
export const INT64_MIGRATION = 'mongodb_int64_numbers';

type Collection = {
  find(filter: object, options?: object): { toArray(): Promise<Record<string, unknown>[]> };
  findOne(filter: object): Promise<Record<string, unknown> | null>;
  updateOne(filter: object, update: object, options?: object): Promise<unknown>;
};

/**
 * The MongoDB counterpart of a SQL migration, run by `openDatabase` once per database: every document
 * whose int64 field (`fields`: collection → field names) holds a decimal string gets the number
 * instead; then `{ _id: "mongodb_int64_numbers" }` is recorded in `<service>_migrations` and later
 * opens skip the scan. Idempotent: a document already converted is not matched again (`$type`).
 * @returns how many fields were converted, by collection
 */
export async function convertInt64Strings(orm: MikroORM, service: string, fields: Map<string, string[]>, logger: Logger): Promise<Record<string, number>> {
  const conn = (orm.em.fork() as unknown as { getConnection(): { getCollection(name: string): Collection } }).getConnection();
  const migrations = conn.getCollection(`${service}_migrations`);
  if (await migrations.findOne({ _id: INT64_MIGRATION })) return {};
  const counts: Record<string, number> = {};
  for (const [collection, names] of fields) {
    const c = conn.getCollection(collection);
    let n = 0;
    for (const field of names) {
      const docs = await c.find({ [field]: { $type: 'string' } }, { projection: { [field]: 1 } }).toArray();
      for (const doc of docs) {
        const value = Number(doc[field]);
        if (!Number.isFinite(value)) continue;
        // only the string seen is replaced: a concurrent writer's number is kept
        await c.updateOne({ _id: doc._id, [field]: doc[field] }, { $set: { [field]: value } });
        n++;
      }
    }
    if (n > 0) counts[collection] = n;
  }
  await migrations.updateOne({ _id: INT64_MIGRATION }, { $set: { executed_at: Math.floor(Date.now() / 1000) } }, { upsert: true });
  if (Object.keys(counts).length > 0) logger.info({ converted: counts }, 'mongodb: int64 values stored as strings converted to numbers');
  return counts;
}
