/**
 * The lexical arm of the read slice: the word index, the trigram index (CJK runs of 3 or more) and a bounded
 * LIKE scan (CJK runs of 1–2), planned by `planLexicalQuery` and merged per memory by summing scores.
 */
import { invalidInput } from '../errors.js';
import { buildMatch, type LexicalPlan, planLexicalQuery } from '../lexical-plan.js';
import { type LexicalHit, type LexicalQuery, type LexicalResult, RECALLABLE_KINDS } from '../types.js';
import { validateAgentId, validateLimit } from '../validate.js';
import type { StoreContext } from './context.js';
import { kindsFilter, tagsFilter } from './filters.js';

/** Score of one LIKE-path match (a small constant: the LIKE path has no ranking of its own). */
export const LIKE_MATCH_SCORE = 0.5;

type FtsRow = { id: string; revision: number; score: number };
type LikeRow = { id: string; revision: number; hits: number };

function ftsSql(table: 'words' | 'trigram', filterOther: boolean, likeFilter: boolean): string {
  const t = table === 'words' ? 'memories_fts_words' : 'memories_fts_trigram';
  const other = table === 'words' ? 'memories_fts_trigram' : 'memories_fts_words';
  return `SELECT m.id AS id, m.revision AS revision, -bm25(${t}, 0.0, 1.0) AS score
      FROM ${t} f JOIN memories m ON m.rid = f.rowid
      WHERE ${t} MATCH @match AND m.agent_id = @agent AND m.lifecycle = 'active'
        AND m.kind IN (SELECT value FROM json_each(@kinds))
        AND NOT EXISTS (SELECT 1 FROM json_each(@tags) j WHERE NOT EXISTS (
          SELECT 1 FROM memory_tags t WHERE t.agent_id = @agent AND t.tag = j.value AND t.rid = m.rid))
        ${filterOther ? `AND m.rid IN (SELECT rowid FROM ${other} WHERE ${other} MATCH @other)` : ''}
        ${likeFilter ? `AND NOT EXISTS (SELECT 1 FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) NOT LIKE j.value ESCAPE '\\')` : ''}
      ORDER BY score DESC, m.id ASC LIMIT @limit`;
}

function likeSql(mode: 'any' | 'all'): string {
  const cond =
    mode === 'any'
      ? `EXISTS (SELECT 1 FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) LIKE j.value ESCAPE '\\')`
      : `NOT EXISTS (SELECT 1 FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) NOT LIKE j.value ESCAPE '\\')`;
  return `SELECT m.id AS id, m.revision AS revision,
        (SELECT count(*) FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) LIKE j.value ESCAPE '\\') AS hits
      FROM memories m
      WHERE m.agent_id = @agent AND m.has_cjk = 1 AND m.lifecycle = 'active'
        AND m.kind IN (SELECT value FROM json_each(@kinds))
        AND NOT EXISTS (SELECT 1 FROM json_each(@tags) j WHERE NOT EXISTS (
          SELECT 1 FROM memory_tags t WHERE t.agent_id = @agent AND t.tag = j.value AND t.rid = m.rid))
        AND ${cond}
      ORDER BY m.created_at DESC, m.rid DESC LIMIT @limit`;
}

/**
 * Lexical search of one agent's active rows: word index, trigram index (CJK ≥ 3) and a bounded LIKE scan
 * (CJK 1–2), merged per id by summing scores; ordered by score desc, id asc.
 */
export function searchLexical(ctx: StoreContext, query: LexicalQuery): Promise<LexicalResult> {
  return ctx.op('searchLexical', () => {
    if (typeof query !== 'object' || query === null) throw invalidInput('query must be an object');
    const agentId = validateAgentId(query.agentId);
    const limit = validateLimit(query.limit, 'limit', 1000, 50);
    const kinds = kindsFilter(query.kinds, RECALLABLE_KINDS);
    const tags = tagsFilter(query.tags);
    const mode = query.mode ?? 'any';
    const plan: LexicalPlan = planLexicalQuery(query.terms, mode);
    const paths = {
      words: plan.wordsExpr !== null,
      trigram: plan.trigramExpr !== null,
      like: plan.likeTerms.length > 0,
    };
    const base = {
      hits: [] as LexicalHit[],
      likeTerms: [...plan.likeTerms],
      droppedTerms: plan.droppedTerms,
    };
    if (!paths.words && !paths.trigram && !paths.like) {
      return { ...base, paths: { words: false, trigram: false, like: false } };
    }
    const token = ctx.agentToken(agentId);
    const wordsMatch = plan.wordsExpr === null ? null : buildMatch(token, plan.wordsExpr);
    const trigramMatch = plan.trigramExpr === null ? null : buildMatch(token, plan.trigramExpr);
    const likes = JSON.stringify(plan.likePatterns);
    const merged = new Map<string, { revision: number; score: number }>();
    const add = (id: string, revision: number, score: number): void => {
      const prev = merged.get(id);
      if (prev === undefined) merged.set(id, { revision, score });
      else prev.score += score;
    };
    const common = { agent: agentId, kinds, tags, limit };
    if (mode === 'any') {
      if (wordsMatch !== null) {
        const sql = ftsSql('words', false, false);
        for (const r of ctx.stmt('fts', sql).all<FtsRow>({ ...common, match: wordsMatch })) {
          add(r.id, r.revision, r.score);
        }
      }
      if (trigramMatch !== null) {
        const sql = ftsSql('trigram', false, false);
        for (const r of ctx.stmt('fts', sql).all<FtsRow>({ ...common, match: trigramMatch })) {
          add(r.id, r.revision, r.score);
        }
      }
      if (paths.like) {
        for (const r of ctx.stmt('like', likeSql('any')).all<LikeRow>({ ...common, likes })) {
          add(r.id, r.revision, r.hits * LIKE_MATCH_SCORE);
        }
      }
    } else {
      const likeBonus = plan.likeTerms.length * LIKE_MATCH_SCORE;
      if (wordsMatch !== null) {
        const sql = ftsSql('words', trigramMatch !== null, paths.like);
        const params: Record<string, unknown> = { ...common, match: wordsMatch };
        if (trigramMatch !== null) params.other = trigramMatch;
        if (paths.like) params.likes = likes;
        for (const r of ctx.stmt('fts', sql).all<FtsRow>(params)) add(r.id, r.revision, r.score + likeBonus);
      }
      if (trigramMatch !== null) {
        const sql = ftsSql('trigram', wordsMatch !== null, paths.like);
        const params: Record<string, unknown> = { ...common, match: trigramMatch };
        if (wordsMatch !== null) params.other = wordsMatch;
        if (paths.like) params.likes = likes;
        for (const r of ctx.stmt('fts', sql).all<FtsRow>(params)) {
          // The words query already added the LIKE bonus for rows it found.
          const bonus = wordsMatch !== null && merged.has(r.id) ? 0 : likeBonus;
          add(r.id, r.revision, r.score + bonus);
        }
      }
      if (wordsMatch === null && trigramMatch === null) {
        for (const r of ctx.stmt('like', likeSql('all')).all<LikeRow>({ ...common, likes })) {
          add(r.id, r.revision, r.hits * LIKE_MATCH_SCORE);
        }
      }
    }
    const hits: LexicalHit[] = [...merged.entries()]
      .map(([id, v]) => ({ id, revision: v.revision, score: v.score }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, limit);
    return { ...base, hits, paths };
  });
}
