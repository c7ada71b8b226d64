/**
 * @module authz/openfga/models
 * Authorization model versions kept in an OpenFGA store (`--fga-store=openfga`): OpenFGA keeps models
 * append-only like Gatehouse (behaviour.md §7.1 Versions) but stores JSON, not the DSL text, and has
 * no delete. So the DSL as submitted is kept with the model as an OpenFGA assertion of that model (its
 * free-form `context` carries the text; assertions are test data, never evaluated by queries), and a
 * reset appends a marker model that every replica reads as "no model".
 */
import { transformer } from '@openfga/syntax-transformer';
import type { AuthorizationModel, OpenFgaClient, WriteAuthorizationModelRequest } from '@openfga/sdk';
import { parseDsl, type JsonModel } from '../domain/model-dsl.ts';
import { TypeSystem } from '../domain/type-system.ts';
import { fga } from './client.ts';

/** The id of the objects and users of the assertion that carries a model's DSL. */
const DSL_CARRIER_ID = 'gatehouse_model_dsl';
/** The type of the marker model a reset appends (not a valid Gatehouse model: it is never answered from). */
export const RESET_MARKER_TYPE = 'gatehouse_reset_marker';

/** The active model as the backend uses it. */
export interface ActiveModel {
  id: string;
  dsl: string;
  ts: TypeSystem;
}

/** The OpenFGA write request of a validated model. */
export function modelRequest(model: JsonModel): WriteAuthorizationModelRequest {
  return {
    schema_version: model.schema_version,
    type_definitions: model.type_definitions as unknown as WriteAuthorizationModelRequest['type_definitions'],
    ...(model.conditions ? { conditions: model.conditions as WriteAuthorizationModelRequest['conditions'] } : {}),
  };
}

/** The reset marker model (behaviour.md §7.1 Reset). */
export function resetMarker(): WriteAuthorizationModelRequest {
  return { schema_version: '1.1', type_definitions: [{ type: RESET_MARKER_TYPE }] };
}

/** The object#relation an assertion of `model` may name (OpenFGA checks that both exist), or null for a model without relations. */
function carrier(model: JsonModel): { object: string; relation: string; user: string } | null {
  for (const td of model.type_definitions) {
    const relation = Object.keys(td.relations ?? {})[0];
    if (relation !== undefined) return { object: `${td.type}:${DSL_CARRIER_ID}`, relation, user: `${td.type}:${DSL_CARRIER_ID}` };
  }
  return null;
}

/**
 * Appends a model version and keeps its DSL with it.
 * @returns the OpenFGA model id (a ULID)
 * @throws AppError `invalid_argument` (OpenFGA refused the model), `unavailable`
 */
export async function appendModel(client: OpenFgaClient, model: JsonModel, dsl: string): Promise<string> {
  const { authorization_model_id: id } = await fga('WriteAuthorizationModel', client.writeAuthorizationModel(modelRequest(model)));
  const tuple = carrier(model);
  if (tuple) {
    await fga('WriteAssertions', client.api.writeAssertions(client.storeId!, id, {
      assertions: [{ tuple_key: tuple, expectation: false, context: { gatehouse_dsl: dsl } }],
    }));
  }
  return id;
}

/** The DSL of a stored model: the text kept with it, else (a model written by another client) the DSL OpenFGA's transformer derives from its JSON. */
async function dslOf(client: OpenFgaClient, model: AuthorizationModel): Promise<string> {
  const { assertions } = await fga('ReadAssertions', client.api.readAssertions(client.storeId!, model.id));
  for (const a of assertions ?? []) {
    const text = (a.context as { gatehouse_dsl?: unknown } | undefined)?.gatehouse_dsl;
    if (typeof text === 'string') return text;
  }
  return transformer.transformJSONToDSL(model as unknown as Parameters<typeof transformer.transformJSONToDSL>[0]);
}
/**
 * Reads the newest model version of the store on every call (one small request, so a model written
 * through any replica is active on every replica at once, as with the SQL store) and compiles it once per id.
 */
export class ModelCache {
  private readonly compiled = new Map<string, ActiveModel>();
  private readonly client: () => OpenFgaClient;

  constructor(client: () => OpenFgaClient) {
    this.client = client;
  }

  /**
   * The active model, or null on an empty (or reset) store.
   * @throws AppError `unavailable`
   */
  async active(): Promise<ActiveModel | null> {
    const page = await fga('ReadAuthorizationModels', this.client().readAuthorizationModels({ pageSize: 1 }));
    const latest = page.authorization_models?.[0];
    if (!latest || latest.type_definitions?.some((t) => t.type === RESET_MARKER_TYPE)) return null;
    let hit = this.compiled.get(latest.id);
    if (!hit) {
      const dsl = await dslOf(this.client(), latest);
      hit = { id: latest.id, dsl, ts: new TypeSystem(parseDsl(dsl)) };
      if (this.compiled.size >= 16) this.compiled.delete(this.compiled.keys().next().value!);
      this.compiled.set(latest.id, hit);
    }
    return hit;
  }
}
