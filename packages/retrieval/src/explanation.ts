import type { RetrievalArm } from '@engram/contracts/enums';
import type { ChunkSpan, MemoryRecord } from '@engram/store';

/**
 * An open contradiction: the result and the facts in `with` state different values for the same subject.
 * `newer`: the result is the more recent statement (likely current); `older`: a newer fact contradicts it
 * (likely outdated). Maintenance resolves it (or leaves both marked when it has no model).
 */
export interface RetrievalConflict {
  readonly status: 'newer' | 'older';
  readonly with: readonly string[];
}

/** What the rerank stage did to a result. */
export interface RerankEvidence {
  readonly score: number;
  readonly rank: number;
  readonly fusedRank: number;
}

/** Why a result is where it is. */
export interface RetrievalExplanation {
  /** Arms that found the row, in `RETRIEVAL_ARMS` order. */
  readonly arms: readonly RetrievalArm[];
  /** 1-based rank among the lexical arm's revalidated candidates (after conversation scoring). */
  readonly lexicalRank?: number;
  /**
   * The lexical score (higher is better): the store's, plus the `longMemory`, `conversation` and `time` terms
   * when present.
   */
  readonly lexicalScore?: number;
  /**
   * For a memory with a session and a position, under conversation scoring: how much of `lexicalScore` came
   * from its best neighbour in the session and from its session's prior (the rest is its own match).
   */
  readonly conversation?: { readonly neighbour: number; readonly session: number };
  /**
   * When the lexical arm's answer held a memory stored in chunks: how much of `lexicalScore` came from this
   * memory's score as a whole memory (the long-memory prior; see `longMemory` in the retriever's settings).
   */
  readonly longMemory?: number;
  /**
   * For a memory whose time falls in the window the query names ("last week"): the window (epoch ms, `from`
   * inclusive, `to` exclusive) and how much of `lexicalScore` it added.
   */
  readonly time?: { readonly from: number; readonly to: number; readonly gain: number };
  /** 1-based rank among the vector arm's revalidated candidates. */
  readonly vectorRank?: number;
  /** Cosine similarity (1 − distance). */
  readonly similarity?: number;
  /** The vector arm's weight in this call (`fusion.vector` × its confidence), when the arm ran. */
  readonly vectorWeight?: number;
  /** The reciprocal-rank-fusion term (the relevance under the `rrf` method; shown for reference otherwise). */
  readonly rrf: number;
  /** The relevance the order is based on: the calibrated combination (default) or the RRF term. */
  readonly relevance: number;
  /** The arms' agreement (0..1) under the calibrated method, for rows the vector arm found. */
  readonly agreement?: number;
  /** How much the vector arm counted (0..1): max(agreement^p, its margin confidence), calibrated method only. */
  readonly trust?: number;
  /** The row's importance (0..1). */
  readonly importance: number;
  /** The recency factor (0..1). */
  readonly recency: number;
  /** The final score the order is based on. */
  readonly final: number;
  /**
   * For a memory stored in chunks (content longer than the store's chunk budget): the chunk that matched
   * (the lexical arm's best chunk, else the vector arm's nearest), as UTF-16 offsets into `record.content`;
   * `content.slice(start, end)` is the window to show. Absent for a memory that is one chunk.
   */
  readonly chunk?: ChunkSpan;
  /**
   * Set when a reranker reordered the result (the `rerank` stage): its score (the reranker's scale, higher is
   * better), its 1-based rank among the reranked results and its rank in the fused order before. The results
   * then follow `rank`; `final` stays the fusion's.
   */
  readonly rerank?: RerankEvidence;
  /** Set when the result is one side of an open contradiction with another current fact. */
  readonly conflict?: RetrievalConflict;
}

/** One fused result. */
export interface RetrievalResult {
  readonly record: MemoryRecord;
  /** Equal to `explanation.final`. */
  readonly score: number;
  readonly explanation: RetrievalExplanation;
}

/** Per-arm evidence of one candidate (the arm-specific fields of its explanation). */
export type CandidateEvidence = Pick<
  RetrievalExplanation,
  | 'lexicalRank'
  | 'lexicalScore'
  | 'conversation'
  | 'longMemory'
  | 'time'
  | 'vectorRank'
  | 'similarity'
  | 'chunk'
>;

/** The fusion's figures for one candidate (the rest of its explanation; `vectorWeight` always computed). */
export type FusionTerms = Omit<RetrievalExplanation, keyof CandidateEvidence | 'vectorWeight'> & {
  readonly vectorWeight: number;
};

/**
 * The explanation of one result: the evidence each arm gave (a field an arm did not give is absent, never
 * undefined) and the fusion's terms. `vectorWeight` is given only for a row the vector arm found.
 */
export function explain(evidence: CandidateEvidence, terms: FusionTerms): RetrievalExplanation {
  return {
    arms: terms.arms,
    ...(evidence.lexicalRank === undefined ? {} : { lexicalRank: evidence.lexicalRank }),
    ...(evidence.lexicalScore === undefined ? {} : { lexicalScore: evidence.lexicalScore }),
    ...(evidence.conversation === undefined ? {} : { conversation: evidence.conversation }),
    ...(evidence.longMemory === undefined ? {} : { longMemory: evidence.longMemory }),
    ...(evidence.time === undefined ? {} : { time: evidence.time }),
    ...(evidence.vectorRank === undefined ? {} : { vectorRank: evidence.vectorRank }),
    ...(evidence.similarity === undefined ? {} : { similarity: evidence.similarity }),
    ...(evidence.vectorRank === undefined ? {} : { vectorWeight: terms.vectorWeight }),
    rrf: terms.rrf,
    relevance: terms.relevance,
    ...(terms.agreement === undefined ? {} : { agreement: terms.agreement }),
    ...(terms.trust === undefined ? {} : { trust: terms.trust }),
    importance: terms.importance,
    recency: terms.recency,
    final: terms.final,
    ...(evidence.chunk === undefined ? {} : { chunk: evidence.chunk }),
  };
}
