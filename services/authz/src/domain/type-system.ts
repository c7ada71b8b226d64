/** @module type-system: the compiled authorization model: rewrites, direct types and reachability (OpenFGA typesystem). */
import type { JsonModel, JsonUserset } from './model-dsl.ts';
import type { UserRef } from './object-ref.ts';
import { compileConditions, type CompiledCondition } from './condition.ts';

/** A relation rewrite, compiled from the JSON `Userset`. */
export type Rewrite =
  | { k: 'this' }
  | { k: 'computed'; relation: string }
  | { k: 'ttu'; tupleset: string; computed: string }
  | { k: 'union'; children: Rewrite[] }
  | { k: 'intersection'; children: Rewrite[] }
  | { k: 'difference'; base: Rewrite; subtract: Rewrite };

/** A directly related user type: `user`, `user:*` (wildcard) or `group#member` (relation). */
export interface DirectType {
  type: string;
  relation: string;
  wildcard: boolean;
  /** the condition a tuple of this type must carry (`[user with c]`); '' for none */
  condition: string;
}

/** One relation of one type. */
export interface RelationDef {
  type: string;
  name: string;
  rewrite: Rewrite;
  /** the allowed direct user types; empty when the rewrite has no `this` */
  directTypes: DirectType[];
  /** subject type keys (`user`, `group#member`) that can ever be members; prunes impossible branches */
  terminals: Set<string>;
  /** true when the rewrite closure contains `and` or `but not` (list results need a check) */
  needsVerify: boolean;
  /** user types this relation accepts as `type:*` (skips a wildcard lookup for the rest) */
  wildcardTypes: Set<string>;
}

/** Upward edge used by list-objects: membership in (type, relation) implies membership in (parentType, parentRelation). */
export interface TtuParent {
  tupleset: string;
  parentType: string;
  parentRelation: string;
}

function compile(u: JsonUserset): Rewrite {
  if (u.this) return { k: 'this' };
  if (u.computedUserset) return { k: 'computed', relation: u.computedUserset.relation ?? '' };
  if (u.tupleToUserset) {
    return { k: 'ttu', tupleset: u.tupleToUserset.tupleset.relation ?? '', computed: u.tupleToUserset.computedUserset.relation ?? '' };
  }
  if (u.union) return { k: 'union', children: u.union.child.map(compile) };
  if (u.intersection) return { k: 'intersection', children: u.intersection.child.map(compile) };
  if (u.difference) return { k: 'difference', base: compile(u.difference.base), subtract: compile(u.difference.subtract) };
  return { k: 'this' };
}

/** Visits the rewrite leaves that grant membership (union/intersection children, difference base). */
function positiveLeaves(r: Rewrite, visit: (leaf: Rewrite) => void): void {
  switch (r.k) {
    case 'union':
    case 'intersection':
      for (const c of r.children) positiveLeaves(c, visit);
      return;
    case 'difference':
      positiveLeaves(r.base, visit);
      return;
    case 'this':
    case 'computed':
    case 'ttu':
      visit(r);
  }
}

/** The leaves under a subtracted side of `but not` (anywhere below it), which {@link positiveLeaves} leaves out. */
function subtractLeaves(r: Rewrite, visit: (leaf: Rewrite) => void): void {
  if (r.k === 'union' || r.k === 'intersection') for (const c of r.children) subtractLeaves(c, visit);
  else if (r.k === 'difference') {
    subtractLeaves(r.base, visit);
    allLeaves(r.subtract, visit);
  }
}

/**
 * The leaves OpenFGA's older list objects algorithm (the one it runs for a userset or `type:*` subject) expands
 * towards a relation: every union child, only the first child of an intersection and only the base of `but not`
 * (`GetPrunedRelationshipEdges` with `resolveAnyEdge`, internal/graph); the rest is left to the check of each
 * candidate.
 */
function prunedLeaves(r: Rewrite, visit: (leaf: Rewrite) => void): void {
  switch (r.k) {
    case 'union':
      for (const c of r.children) prunedLeaves(c, visit);
      return;
    case 'intersection':
      if (r.children.length > 0) prunedLeaves(r.children[0] as Rewrite, visit);
      return;
    case 'difference':
      prunedLeaves(r.base, visit);
      return;
    case 'this':
    case 'computed':
    case 'ttu':
      visit(r);
  }
}

function allLeaves(r: Rewrite, visit: (leaf: Rewrite) => void): void {
  if (r.k === 'union' || r.k === 'intersection') for (const c of r.children) allLeaves(c, visit);
  else if (r.k === 'difference') {
    allLeaves(r.base, visit);
    allLeaves(r.subtract, visit);
  } else visit(r);
}

/** The compiled model: lookups used by validation, check, list and expand. */
export class TypeSystem {
  readonly types = new Map<string, Map<string, RelationDef>>();
  /** (type#relation) → relations on the same type that include it through a computed userset */
  readonly computedParents = new Map<string, string[]>();
  /** (type#relation) → tuple-to-userset relations that include it */
  readonly ttuParents = new Map<string, TtuParent[]>();
  /**
   * {@link computedParents} and {@link ttuParents} of the leaves only a subtracted side (`but not`) reaches: the
   * edges OpenFGA's list objects also reads, for the conditions it evaluates on them (see reachableFrom)
   */
  readonly subtractComputedParents = new Map<string, string[]>();
  readonly subtractTtuParents = new Map<string, TtuParent[]>();
  /**
   * {@link computedParents} and {@link ttuParents} along the leaves OpenFGA's older list objects algorithm expands
   * (every union child, the first child of an intersection, the base of `but not`): the reverse expansion for a
   * userset or wildcard subject, whose reads (and condition errors) are only those
   */
  readonly prunedComputedParents = new Map<string, string[]>();
  readonly prunedTtuParents = new Map<string, TtuParent[]>();
  /** the model's conditions by name, compiled */
  readonly conditions: Map<string, CompiledCondition>;
  /**
   * `type#relation` usersets some relation's direct types allow as a tuple user (`group#member` for
   * `[group#member]`): only these can be the user of an indexed tuple, which holds only tuples the model allows
   */
  readonly usersetUsers = new Set<string>();

  /** @throws Error when a condition does not compile (parseDsl refuses such a model first) */
  constructor(model: JsonModel) {
    this.conditions = compileConditions(model.conditions);
    for (const td of model.type_definitions) {
      const rels = new Map<string, RelationDef>();
      for (const [name, userset] of Object.entries(td.relations ?? {})) {
        const refs = td.metadata?.relations?.[name]?.directly_related_user_types ?? [];
        rels.set(name, {
          type: td.type,
          name,
          rewrite: compile(userset),
          directTypes: refs.map((r) => ({ type: r.type, relation: r.relation ?? '', wildcard: r.wildcard !== undefined, condition: r.condition ?? '' })),
          terminals: new Set(),
          needsVerify: false,
          wildcardTypes: new Set(refs.filter((r) => r.wildcard !== undefined).map((r) => r.type)),
        });
      }
      this.types.set(td.type, rels);
    }
    for (const rels of this.types.values()) for (const def of rels.values()) for (const d of def.directTypes) if (d.relation !== '') this.usersetUsers.add(`${d.type}#${d.relation}`);
    this.buildEdges();
    this.buildTerminals();
  }

  /** The relation, or undefined when the type or relation is not defined. */
  relation(type: string, relation: string): RelationDef | undefined {
    return this.types.get(type)?.get(relation);
  }

  /**
   * True when the relation's direct types allow this user (a tuple user or contextual tuple user) with
   * this condition (`''` for a tuple without one): `[user, user with c]` allows both, `[user with c]` only
   * a tuple carrying `c`.
   */
  allowsUser(def: RelationDef, user: UserRef, condition = ''): boolean {
    for (const d of def.directTypes) {
      if (d.type !== user.type || d.condition !== condition) continue;
      if (user.kind === 'wildcard' ? d.wildcard : user.kind === 'userset' ? d.relation === user.relation : !d.wildcard && d.relation === '') {
        return true;
      }
    }
    return false;
  }

  private buildEdges(): void {
    for (const [type, rels] of this.types) {
      for (const def of rels.values()) {
        const edges = (computed: Map<string, string[]>, ttus: Map<string, TtuParent[]>) => (leaf: Rewrite): void => {
          if (leaf.k === 'computed') push(computed, `${type}#${leaf.relation}`, def.name);
          if (leaf.k === 'ttu') {
            for (const d of this.relation(type, leaf.tupleset)?.directTypes ?? []) {
              if (d.relation !== '' || d.wildcard) continue;
              push(ttus, `${d.type}#${leaf.computed}`, { tupleset: leaf.tupleset, parentType: type, parentRelation: def.name });
            }
          }
        };
        positiveLeaves(def.rewrite, edges(this.computedParents, this.ttuParents));
        subtractLeaves(def.rewrite, edges(this.subtractComputedParents, this.subtractTtuParents));
        prunedLeaves(def.rewrite, edges(this.prunedComputedParents, this.prunedTtuParents));
        // a conditioned tuple grants only in its context, so list candidates through one need a check
        let verify = def.directTypes.some((d) => d.condition !== '');
        const walk = (r: Rewrite): void => {
          if (r.k === 'intersection' || r.k === 'difference') verify = true;
          if (r.k === 'ttu' && this.relation(type, r.tupleset)?.directTypes.some((d) => d.condition !== '')) verify = true;
          if (r.k === 'union' || r.k === 'intersection') r.children.forEach(walk);
          if (r.k === 'difference') walk(r.base);
        };
        walk(def.rewrite);
        def.needsVerify = verify;
      }
    }
    // needsVerify is transitive: a relation that reaches an `and`/`but not` through other relations needs a check too
    let changed = true;
    while (changed) {
      changed = false;
      for (const [type, rels] of this.types) {
        for (const def of rels.values()) {
          if (def.needsVerify) continue;
          if (this.dependencies(type, def).some((d) => d.needsVerify)) {
            def.needsVerify = true;
            changed = true;
          }
        }
      }
    }
  }

  /** Relations whose membership feeds this relation (computed, userset direct types, tuple-to-userset targets). */
  private dependencies(type: string, def: RelationDef): RelationDef[] {
    const out: RelationDef[] = [];
    for (const d of def.directTypes) {
      const r = d.relation !== '' ? this.relation(d.type, d.relation) : undefined;
      if (r) out.push(r);
    }
    allLeaves(def.rewrite, (leaf) => {
      if (leaf.k === 'computed') {
        const r = this.relation(type, leaf.relation);
        if (r) out.push(r);
      } else if (leaf.k === 'ttu') {
        for (const d of this.relation(type, leaf.tupleset)?.directTypes ?? []) {
          const r = this.relation(d.type, leaf.computed);
          if (r) out.push(r);
        }
      }
    });
    return out;
  }

  /** Fixpoint: which subject types (`user`, `group#member`) can be members of each relation. */
  private buildTerminals(): void {
    for (const rels of this.types.values()) {
      for (const def of rels.values()) {
        def.terminals.add(`${def.type}#${def.name}`);
        for (const d of def.directTypes) def.terminals.add(d.relation !== '' ? `${d.type}#${d.relation}` : d.type);
      }
    }
    let changed = true;
    while (changed) {
      changed = false;
      for (const [type, rels] of this.types) {
        for (const def of rels.values()) {
          for (const dep of this.dependencies(type, def)) {
            for (const t of dep.terminals) {
              if (!def.terminals.has(t)) {
                def.terminals.add(t);
                changed = true;
              }
            }
          }
        }
      }
    }
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
