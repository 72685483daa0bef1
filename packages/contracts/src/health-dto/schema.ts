/**
 * The strict zod schemas of the health DTO: the health endpoint and the health page parse with them.
 * Unknown keys, strings other than `agentId`, and missing enum keys are rejected.
 */
import { z } from 'zod';
import {
  ADMISSION_DECISIONS,
  CANDIDATE_ARMS,
  CIRCUIT_STATES,
  DEGRADATION_CAUSES,
  DRAIN_TRANSITIONS,
  EMBEDDING_STATES,
  EXTRACTION_DECISIONS,
  EXTRACTION_OUTCOMES,
  INTEGRITY_STATES,
  LIFECYCLES,
  MAINTENANCE_STEPS,
  MEMORY_KINDS,
  MODEL_OUTPUT_SCHEMAS,
  PHASE_OUTCOMES,
  PROVIDER_KINDS,
  PROVIDER_RACES,
  RETRIEVAL_ARMS,
  RETRIEVAL_OUTCOMES,
  RETRIEVAL_PURPOSES,
  RETRIEVAL_STAGES,
  STATEMENT_KINDS,
  VECTOR_WARMUP_OUTCOMES,
} from '../enums.js';
import { checkAgentId, MAX_AGENT_ID_LENGTH } from '../rules/agent-id.js';
import type {
  AgentDiagnostics,
  DiagnosticsSnapshot,
  DiagnosticsSnapshotAll,
  DistributionSummary,
  HealthDto,
  ProcessDiagnostics,
  ProcessesDto,
  StoreHealthDto,
} from './types.js';

/** Version of the snapshot shape; bumped on any incompatible change. */
export const DIAGNOSTICS_SCHEMA_VERSION: 1 = 1;

const count = z.number().nonnegative();
const nullableCount = count.nullable();
const timestamp = z.number().nonnegative();
const nullableTimestamp = timestamp.nullable();

function countsBy<K extends string>(keys: readonly K[]) {
  return z.record(z.enum(keys), count);
}

/** Schema of one distribution: window count, all-time total, nearest-rank p50/p95 and max (null without samples). */
export const distributionSchema: z.ZodType<DistributionSummary> = z.strictObject({
  count: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  p50: nullableCount,
  p95: nullableCount,
  max: nullableCount,
});

const retrievalPurposeSchema = z.strictObject({
  operations: count,
  outcomes: countsBy(RETRIEVAL_OUTCOMES),
  degradations: countsBy(DEGRADATION_CAUSES),
  arms: countsBy(RETRIEVAL_ARMS),
  latency: z.record(z.enum(RETRIEVAL_STAGES), distributionSchema),
  candidates: z.record(z.enum(CANDIDATE_ARMS), distributionSchema),
});

/** Schema of the per-agent part. */
export const agentDiagnosticsSchema: z.ZodType<AgentDiagnostics> = z.strictObject({
  tracked: z.boolean(),
  firstSeenAt: nullableTimestamp,
  lastSeenAt: nullableTimestamp,
  retrieval: z.record(z.enum(RETRIEVAL_PURPOSES), retrievalPurposeSchema),
  extraction: z.strictObject({
    chunks: count,
    outcomes: countsBy(EXTRACTION_OUTCOMES),
    decisions: countsBy(EXTRACTION_DECISIONS),
    candidates: count,
    invalidOutputs: count,
    conflicts: count,
    duration: distributionSchema,
  }),
  embedding: z.strictObject({
    batches: count,
    rows: count,
    transitions: countsBy(DRAIN_TRANSITIONS),
    batchSize: distributionSchema,
    duration: distributionSchema,
  }),
  maintenance: z.strictObject({
    passes: count,
    cheap: z.strictObject({
      outcomes: countsBy(PHASE_OUTCOMES),
      repaired: count,
      archived: count,
      pruned: count,
    }),
    heavy: z.strictObject({
      outcomes: countsBy(PHASE_OUTCOMES),
      modelCalls: count,
      inputTokens: count,
      invalidOutputs: count,
      invalidBySchema: countsBy(MODEL_OUTPUT_SCHEMAS),
      conflicts: count,
      denials: countsBy(MAINTENANCE_STEPS),
      steps: z.record(z.enum(MAINTENANCE_STEPS), countsBy(PHASE_OUTCOMES)),
    }),
    duration: distributionSchema,
  }),
});

/** Schema of the process-wide part. */
export const processDiagnosticsSchema: z.ZodType<ProcessDiagnostics> = z.strictObject({
  collector: z.strictObject({
    agentsTracked: count,
    maxAgents: count,
    agentTtlMs: count,
    sampleCapacity: count,
    agentsEvicted: count,
    agentsExpired: count,
    recordsRejected: count,
    observerFailures: count,
  }),
  extractionQueue: z.strictObject({
    depth: nullableCount,
    depthHighWater: nullableCount,
    oldestAgeMs: nullableCount,
    updatedAt: nullableTimestamp,
  }),
  embeddingBacklog: z.strictObject({
    total: nullableCount,
    activeAgents: nullableCount,
    updatedAt: nullableTimestamp,
  }),
  vectorStores: z.strictObject({
    openStores: nullableCount,
    openStoresHighWater: nullableCount,
    leases: nullableCount,
    leasesHighWater: nullableCount,
    updatedAt: nullableTimestamp,
    warmup: countsBy(VECTOR_WARMUP_OUTCOMES),
  }),
  providers: z.record(
    z.enum(PROVIDER_KINDS),
    z.strictObject({
      queued: nullableCount,
      queuedHighWater: nullableCount,
      active: nullableCount,
      activeHighWater: nullableCount,
      updatedAt: nullableTimestamp,
      admissions: countsBy(ADMISSION_DECISIONS),
      races: countsBy(PROVIDER_RACES),
    }),
  ),
  queryEmbeddingCircuit: z.strictObject({
    state: z.record(z.enum(CIRCUIT_STATES), z.boolean()),
    failures: nullableCount,
    opened: nullableCount,
    halfOpenProbes: nullableCount,
    rejected: nullableCount,
    reports: count,
    updatedAt: nullableTimestamp,
  }),
  store: z.strictObject({
    statements: countsBy(STATEMENT_KINDS),
  }),
});

// The agent-id rule, so a snapshot never carries an id the store would refuse.
const agentIdSchema = z
  .string()
  .min(1)
  .max(MAX_AGENT_ID_LENGTH)
  .refine((id) => checkAgentId(id) === null);

/** Strict schema of {@link DiagnosticsSnapshot}: unknown keys, strings other than `agentId` and missing enum keys are rejected. */
export const diagnosticsSnapshotSchema: z.ZodType<DiagnosticsSnapshot> = z.strictObject({
  schemaVersion: z.literal(DIAGNOSTICS_SCHEMA_VERSION),
  generatedAt: timestamp,
  agentId: agentIdSchema.nullable(),
  agent: agentDiagnosticsSchema,
  process: processDiagnosticsSchema,
});

/** Strict schema of {@link DiagnosticsSnapshotAll}. */
export const diagnosticsSnapshotAllSchema: z.ZodType<DiagnosticsSnapshotAll> = z.strictObject({
  schemaVersion: z.literal(DIAGNOSTICS_SCHEMA_VERSION),
  generatedAt: timestamp,
  agents: z.array(z.strictObject({ agentId: agentIdSchema, agent: agentDiagnosticsSchema })),
  process: processDiagnosticsSchema,
});

const integerCount = z.number().int().nonnegative();

/** Strict schema of {@link StoreHealthDto}. */
export const storeHealthDtoSchema: z.ZodType<StoreHealthDto> = z.strictObject({
  totals: z.strictObject({
    memories: integerCount,
    events: integerCount,
    facts: integerCount,
    skills: integerCount,
  }),
  byKind: z.record(z.enum(MEMORY_KINDS), integerCount),
  byLifecycle: z.record(z.enum(LIFECYCLES), integerCount),
  byEmbeddingState: z.record(z.enum(EMBEDDING_STATES), integerCount),
  integrity: z
    .strictObject({
      state: z.enum(INTEGRITY_STATES),
      checkedAt: nullableTimestamp,
      badRows: integerCount.optional(),
      damagedVectorChunks: integerCount.optional(),
    })
    .optional(),
});

/** A process id as the DTO carries it: 32 lowercase hex digits. */
export const PROCESS_ID_REGEX: RegExp = /^[0-9a-f]{32}$/;

/** Most processes a health DTO lists. */
export const MAX_PROCESSES_LISTED = 64;

/** Strict schema of a whole-process snapshot (`agentId` null): what a process publishes for the others. */
export const processSnapshotSchema: z.ZodType<DiagnosticsSnapshot> = z.strictObject({
  schemaVersion: z.literal(DIAGNOSTICS_SCHEMA_VERSION),
  generatedAt: timestamp,
  agentId: z.null(),
  agent: agentDiagnosticsSchema,
  process: processDiagnosticsSchema,
});

/** Strict schema of {@link ProcessesDto}. */
export const processesDtoSchema: z.ZodType<ProcessesDto> = z.strictObject({
  list: z
    .array(
      z.strictObject({
        id: z.string().regex(PROCESS_ID_REGEX),
        self: z.boolean(),
        startedAt: timestamp,
        beatAt: timestamp,
        runtime: processSnapshotSchema,
      }),
    )
    .max(MAX_PROCESSES_LISTED + 1),
  skipped: z.number().int().nonnegative(),
});

/** Strict schema of {@link HealthDto}. */
export const healthDtoSchema: z.ZodType<HealthDto> = z.strictObject({
  store: storeHealthDtoSchema,
  runtime: diagnosticsSnapshotSchema,
  processes: processesDtoSchema.optional(),
});
