/**
 * Keyword extraction for the lexical arm (the first step of the retrieval pipeline): pure, bounded, deterministic.
 *
 * The store quotes every term, so nothing extracted here can inject FTS5 syntax; stop words and the
 * splitting of CJK runs into trigram windows are the store's business. Terms are ordered by priority (paths,
 * code identifiers, CJK runs, words) so that the bound drops the least specific terms first.
 */

import { CJK_CHARACTER, CJK_CLASS_SOURCE } from '@engram/contracts/rules';
import { EngramRetrievalError } from './errors.js';

/** Kinds of extracted terms. */
export const KEYWORD_KINDS = ['path', 'identifier', 'cjk', 'word'] as const;
/** A kind of extracted term. */
export type KeywordKind = (typeof KEYWORD_KINDS)[number];

/** Options of {@link extractKeywords}. */
export interface ExtractKeywordsOptions {
  /** Most terms returned, an integer in 1..64 (default 32). */
  readonly maxTerms?: number;
}

/** The terms of a query; `kinds[i]` is the kind of `terms[i]`. */
export interface KeywordExtraction {
  readonly terms: readonly string[];
  readonly kinds: readonly KeywordKind[];
  /** Distinct terms dropped because of `maxTerms`. */
  readonly dropped: number;
}

/** Default bound on the number of extracted terms. */
export const DEFAULT_MAX_TERMS = 32;
/** Only the first this-many UTF-16 units of a query are looked at (bounds the work on pasted text). */
export const MAX_QUERY_SCAN_CHARS = 4096;

// The one CJK class (the store's too): a run of it is one `cjk` term.
const CJK_SPLIT = new RegExp(`(${CJK_CLASS_SOURCE}+)`, 'u');
// Characters that never belong to a path or an identifier; NFKC already folded full-width forms.
const CHUNK_SEPARATORS =
  /[\s,;()[\]{}<>"'`!?|=*&^%+\u3000-\u3004\u3007-\u303f\u2018\u2019\u201c\u201d\u2026]+/u;
const LEADING_NOISE = /^[:#@\-,]+/;
const TRAILING_NOISE = /[.:#@\-,]+$/;
const HAS_ALNUM = /[\p{L}\p{N}]/u;
const PATH = /^[\w.~@:$+\\/-]+$/u;
const PATH_START = /^(?:~\/|\.{1,2}\/|\/)/;
const CAMEL = /[a-z0-9][A-Z]|[A-Z]{2,}[a-z]/;
const IDENT = /^[A-Za-z_$][\w$]*$/;
const DOTTED = /^[A-Za-z_$][\w$-]*(?:\.[\w$-]+)+$/;
const VERSION = /^\d+(?:\.\d+)+$/;
const KEBAB = /^[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+$/;
const WORD = /[\p{L}\p{N}]+/gu;

/** Priorities: lower is kept first when the bound bites. */
const PRIORITY = { path: 0, identifier: 1, cjk: 2, word: 3 } as const;

interface Candidate {
  readonly term: string;
  readonly kind: KeywordKind;
  readonly priority: number;
  readonly position: number;
}

/**
 * Extracts search terms from a query: paths (`src/a/b.ts`, `./x`, `~/.config/y`, plus the basename), code
 * identifiers (camelCase, snake_case, dotted.names, kebab-case, versions), CJK runs (whole: the store windows
 * them into trigrams) and words (lower-cased); deduplicated case-insensitively, at most `maxTerms`.
 */
export function extractKeywords(query: string, options: ExtractKeywordsOptions = {}): KeywordExtraction {
  const maxTerms = options.maxTerms ?? DEFAULT_MAX_TERMS;
  if (!Number.isInteger(maxTerms) || maxTerms < 1 || maxTerms > 64) {
    throw new EngramRetrievalError('ENGRAM_RETRIEVAL_INVALID_INPUT', 'maxTerms must be an integer in 1..64.');
  }
  const text = query.slice(0, MAX_QUERY_SCAN_CHARS).normalize('NFKC');
  const seen = new Set<string>();
  const candidates: Candidate[] = [];
  const add = (term: string, kind: KeywordKind, priority: number): void => {
    const key = term.toLowerCase();
    if (term === '' || seen.has(key)) return;
    seen.add(key);
    candidates.push({ term, kind, priority, position: candidates.length });
  };

  for (const rawChunk of text.split(CHUNK_SEPARATORS)) {
    if (rawChunk === '') continue;
    if (CJK_CHARACTER.test(rawChunk)) {
      for (const part of rawChunk.split(CJK_SPLIT)) {
        if (part === '') continue;
        if (CJK_CHARACTER.test(part)) add(part, 'cjk', PRIORITY.cjk);
        else addChunk(part, add);
      }
    } else {
      addChunk(rawChunk, add);
    }
  }

  const kept = [...candidates]
    .sort((a, b) => a.priority - b.priority || a.position - b.position)
    .slice(0, maxTerms);
  return {
    terms: kept.map((c) => c.term),
    kinds: kept.map((c) => c.kind),
    dropped: candidates.length - kept.length,
  };
}

type Add = (term: string, kind: KeywordKind, priority: number) => void;

function addChunk(rawChunk: string, add: Add): void {
  const chunk = rawChunk.replace(LEADING_NOISE, '').replace(TRAILING_NOISE, '');
  if (!HAS_ALNUM.test(chunk)) return;
  if ((chunk.includes('/') || PATH_START.test(chunk)) && PATH.test(chunk)) {
    add(chunk, 'path', PRIORITY.path);
    const slash = chunk.lastIndexOf('/');
    const base = chunk.slice(slash + 1);
    if (slash >= 0 && base.length >= 3 && HAS_ALNUM.test(base)) add(base, 'path', PRIORITY.path);
    return;
  }
  if (isIdentifier(chunk)) {
    add(chunk, 'identifier', PRIORITY.identifier);
    return;
  }
  for (const match of chunk.matchAll(WORD)) add(match[0].toLowerCase(), 'word', PRIORITY.word);
}

function isIdentifier(chunk: string): boolean {
  if (IDENT.test(chunk)) return chunk.includes('_') || CAMEL.test(chunk);
  return DOTTED.test(chunk) || VERSION.test(chunk) || KEBAB.test(chunk);
}
