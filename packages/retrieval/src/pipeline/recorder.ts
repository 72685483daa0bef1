import {
  DEGRADATION_CAUSES,
  type DegradationCause,
  RETRIEVAL_ARMS,
  type RetrievalArm,
  type RetrievalOutcome,
  type RetrievalPurpose,
  type RetrievalStage,
} from '@engram/contracts/enums';
import type { RetrievalExecution } from '@engram/contracts/observers';

/** Mutable execution record of one call, settled once into a frozen {@link RetrievalExecution}. */
export class ExecutionRecorder {
  readonly purpose: RetrievalPurpose;
  readonly agentId: string;
  readonly startedAt: number;
  readonly startedMono: number;
  readonly latencies: Partial<Record<RetrievalStage, number>> = {};
  readonly degradations: Set<DegradationCause> = new Set<DegradationCause>();
  readonly arms: Set<RetrievalArm> = new Set<RetrievalArm>();
  outcome: RetrievalOutcome = 'failed';
  fts = 0;
  vector = 0;
  selected = 0;

  constructor(purpose: RetrievalPurpose, agentId: string, startedAt: number, startedMono: number) {
    this.purpose = purpose;
    this.agentId = agentId;
    this.startedAt = startedAt;
    this.startedMono = startedMono;
  }

  /** Records a stage's latency (never negative). */
  stage(stage: RetrievalStage, ms: number): void {
    this.latencies[stage] = Math.max(0, ms);
  }

  /** Freezes the record, with the `total` latency up to `endMono`. */
  settle(endMono: number): RetrievalExecution {
    this.stage('total', endMono - this.startedMono);
    const arms = RETRIEVAL_ARMS.filter((arm) => this.arms.has(arm));
    return Object.freeze({
      purpose: this.purpose,
      agentId: this.agentId,
      startedAt: this.startedAt,
      latencies: Object.freeze({ ...this.latencies }),
      candidates: Object.freeze({ fts: this.fts, vector: this.vector, selected: this.selected }),
      outcome: this.outcome,
      degradations: Object.freeze(DEGRADATION_CAUSES.filter((cause) => this.degradations.has(cause))),
      ...(arms.length > 0 ? { arms: Object.freeze(arms) } : {}),
    });
  }
}
