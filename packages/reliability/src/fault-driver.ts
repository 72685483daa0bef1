/**
 * A fault-injection point inside the store's own transactions: a better-sqlite3 driver (handed to the store
 * through its public `driver` option) whose statements call hooks before and after they execute. The crash
 * suite's child uses it to SIGKILL itself between two statements of one write transaction, or right after a
 * COMMIT and before the store's promise resolves: kill points that process scheduling alone reaches only by
 * chance. Everything else is the real driver, the real SQLite and the real store.
 */
import {
  loadDefaultDriver,
  type SqliteDatabase,
  type SqliteDriver,
  type SqliteStatement,
} from '@engram/store-sqlite/raw';

/** What a hook learns about a statement: the SQL family and table, never parameters or content. */
export interface StatementEvent {
  /** `INSERT memories_fts_words`, `UPDATE memories`, `COMMIT` … (verb and first table). */
  readonly statement: string;
  /** Whether the connection was inside a transaction when the statement started. */
  readonly inTransaction: boolean;
}

/** Hooks of the fault-injecting driver; both run synchronously on the store's call path. */
export interface FaultHooks {
  before?(event: StatementEvent): void;
  after?(event: StatementEvent): void;
}

/** The verb and the first table of a statement (`INSERT memories_vec`, `COMMIT`). */
export function describeStatement(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim();
  const verb = (text.split(' ')[0] ?? '').toUpperCase();
  const table = /\b(?:INTO|UPDATE|FROM)\s+([A-Za-z_]\w*)/i.exec(text)?.[1];
  return table === undefined ? verb : `${verb} ${table}`;
}

const EXECUTING = new Set<PropertyKey>(['run', 'get', 'all']);

function instrument(
  stmt: SqliteStatement,
  db: SqliteDatabase,
  sql: string,
  hooks: FaultHooks,
): SqliteStatement {
  const statement = describeStatement(sql);
  const proxy: SqliteStatement = new Proxy(stmt, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (!EXECUTING.has(prop)) {
        return (...args: unknown[]) => {
          const result = fn.apply(target, args);
          // Chaining methods (`pluck`, `raw` …) return the statement itself: keep it instrumented.
          return result === target ? proxy : result;
        };
      }
      return (...args: unknown[]) => {
        const event = { statement, inTransaction: db.inTransaction };
        hooks.before?.(event);
        const result = fn.apply(target, args);
        hooks.after?.(event);
        return result;
      };
    },
  });
  return proxy;
}

/** A driver (the store's default, better-sqlite3, unless `base` is given) with `hooks` around every statement. */
export function createFaultDriver(hooks: FaultHooks, base: SqliteDriver = loadDefaultDriver()): SqliteDriver {
  return new Proxy(base, {
    construct(target, args: unknown[]) {
      const db = Reflect.construct(target, args) as SqliteDatabase;
      const prepare = db.prepare.bind(db);
      Object.defineProperty(db, 'prepare', {
        value: (sql: string): SqliteStatement => instrument(prepare(sql), db, sql, hooks),
        configurable: true,
        writable: true,
      });
      return db;
    },
  });
}
