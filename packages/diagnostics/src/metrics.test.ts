import { readFileSync } from 'node:fs';
// Every closed enum and the schemas, from the one place they are declared.
import * as contracts from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';

/** Placeholder of each closed enum when its keys are collapsed in a path. */
const PLACEHOLDERS = new Map<string, string>([
  [contracts.RETRIEVAL_PURPOSES.join(), '<purpose>'],
  [contracts.RETRIEVAL_STAGES.join(), '<stage>'],
  [contracts.RETRIEVAL_OUTCOMES.join(), '<retrievalOutcome>'],
  [contracts.DEGRADATION_CAUSES.join(), '<degradation>'],
  [contracts.CANDIDATE_ARMS.join(), '<arm>'],
  [contracts.RETRIEVAL_ARMS.join(), '<retrievalArm>'],
  [contracts.CIRCUIT_STATES.join(), '<circuitState>'],
  [contracts.EXTRACTION_OUTCOMES.join(), '<extractionOutcome>'],
  [contracts.EXTRACTION_DECISIONS.join(), '<decision>'],
  [contracts.DRAIN_TRANSITIONS.join(), '<transition>'],
  [contracts.PHASE_OUTCOMES.join(), '<phaseOutcome>'],
  [contracts.MAINTENANCE_STEPS.join(), '<step>'],
  [contracts.MODEL_OUTPUT_SCHEMAS.join(), '<schema>'],
  [contracts.PROVIDER_KINDS.join(), '<providerKind>'],
  [contracts.ADMISSION_DECISIONS.join(), '<admission>'],
  [contracts.PROVIDER_RACES.join(), '<race>'],
  [contracts.VECTOR_WARMUP_OUTCOMES.join(), '<warmup>'],
  [contracts.STATEMENT_KINDS.join(), '<statementKind>'],
  [contracts.MEMORY_KINDS.join(), '<kind>'],
  [contracts.LIFECYCLES.join(), '<lifecycle>'],
  [contracts.EMBEDDING_STATES.join(), '<embeddingState>'],
  [contracts.INTEGRITY_STATES.join(), '<integrityState>'],
]);

/** The slice of zod 4's runtime definitions this walker reads. */
interface SchemaDef {
  readonly type: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly keyType?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly innerType?: z.ZodType;
  readonly entries?: Record<string, string>;
  readonly values?: readonly unknown[];
}

function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { def: SchemaDef }).def;
}

/** Every leaf path of a schema with its type; distributions are one leaf; enum keys collapse to placeholders. */
function leafPaths(schema: z.ZodType, prefix: string, out: Map<string, string>): Map<string, string> {
  if (schema === contracts.distributionSchema) {
    out.set(prefix, 'distribution');
    return out;
  }
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      for (const [key, child] of Object.entries(def.shape ?? {})) {
        leafPaths(child, prefix === '' ? key : `${prefix}.${key}`, out);
      }
      return out;
    case 'record': {
      const keys = Object.keys(defOf(def.keyType as z.ZodType).entries ?? {});
      const placeholder = PLACEHOLDERS.get(keys.join());
      if (placeholder === undefined) throw new Error(`no placeholder for record keys under ${prefix}`);
      return leafPaths(def.valueType as z.ZodType, `${prefix}.${placeholder}`, out);
    }
    case 'nullable':
      out.set(prefix, `nullable ${defOf(def.innerType as z.ZodType).type}`);
      return out;
    // An optional part (the store's integrity check): its leaves are documented like any other.
    case 'optional':
      return leafPaths(def.innerType as z.ZodType, prefix, out);
    case 'enum': {
      const placeholder = PLACEHOLDERS.get(Object.keys(def.entries ?? {}).join());
      if (placeholder === undefined) throw new Error(`no placeholder for the enum at ${prefix}`);
      out.set(prefix, `enum ${placeholder}`);
      return out;
    }
    case 'literal':
      out.set(prefix, `literal ${String(def.values?.[0])}`);
      return out;
    case 'number':
    case 'boolean':
    case 'string':
      out.set(prefix, def.type);
      return out;
    default:
      throw new Error(`unexpected schema type ${def.type} at ${prefix}`);
  }
}

interface DictionaryRow {
  readonly path: string;
  readonly type: string;
  readonly unit: string;
  readonly sampled: string;
  readonly retention: string;
  readonly privacy: string;
}

/** Rows of the dictionary tables (those headed `| Path | Type | …`), one metric per row. */
function dictionary(markdown: string): DictionaryRow[] {
  const rows: DictionaryRow[] = [];
  let inTable = false;
  for (const line of markdown.split('\n')) {
    // Tolerates column padding (a formatter may align the tables).
    if (/^\|\s*Path\s*\|\s*Type\s*\|/.test(line)) {
      inTable = true;
      continue;
    }
    if (!line.startsWith('|')) inTable = false;
    if (!inTable || /^\|\s*:?-{3,}/.test(line)) continue;
    const match = /^\|\s*`([^`]+)`\s*\|(.*)\|\s*$/.exec(line);
    if (match === null) throw new Error(`malformed dictionary row: ${line}`);
    const cells = (match[2] ?? '').split('|').map((cell) => cell.trim());
    const [type = '', unit = '', sampled = '', retention = '', privacy = ''] = cells;
    rows.push({ path: match[1] ?? '', type, unit, sampled, retention, privacy });
  }
  return rows;
}

const PRIVACY_CLASSES = new Set([
  'count',
  'measurement',
  'gauge',
  'timestamp',
  'enum-flag',
  'config',
  'identifier',
]);

describe('metrics.md, the metric dictionary', () => {
  const markdown = readFileSync(new URL('../metrics.md', import.meta.url), 'utf8');
  const rows = dictionary(markdown);
  const schemaPaths = new Map([
    ...leafPaths(contracts.diagnosticsSnapshotSchema, '', new Map()),
    ...leafPaths(contracts.storeHealthDtoSchema, 'store', new Map()),
  ]);

  it('documents every schema path, and nothing the schema lacks, each exactly once', () => {
    const documented = rows.map((row) => row.path);
    expect(new Set(documented).size).toBe(documented.length);
    const missing = [...schemaPaths.keys()].filter((path) => !documented.includes(path));
    const extra = documented.filter((path) => !schemaPaths.has(path));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  });

  it('states the same type as the schema for every path', () => {
    const mismatches = rows
      .filter((row) => schemaPaths.get(row.path) !== row.type)
      .map((row) => `${row.path}: dictionary says "${row.type}", schema says "${schemaPaths.get(row.path)}"`);
    expect(mismatches).toEqual([]);
  });

  it('gives every metric a unit, a sampling point, its capacity and cleanup, and a known privacy class', () => {
    const incomplete = rows
      .filter(
        (row) =>
          row.unit === '' || row.sampled === '' || row.retention === '' || !PRIVACY_CLASSES.has(row.privacy),
      )
      .map((row) => row.path);
    expect(incomplete).toEqual([]);
    // Only the agent id may be an identifier, and it is the only string in the snapshot.
    expect(rows.filter((row) => row.privacy === 'identifier').map((row) => row.path)).toEqual(['agentId']);
    expect([...schemaPaths].filter(([, type]) => type.includes('string')).map(([path]) => path)).toEqual([
      'agentId',
    ]);
  });
});
