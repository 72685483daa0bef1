// The bytes per memory of each of the store's tables, for the cost estimate in ARCHITECTURE.md:
// `node dist/testing/sizes.js <url>` on a database the store has filled (for example by
// `pnpm eval:dataset scifact <data>/scifact.zip <report> --store <url>`). Sizes are
// `pg_total_relation_size` (heap, indexes and TOAST); it reads only, and prints no content.
import pg from 'pg';

const [url] = process.argv.slice(2);
if (url === undefined) throw new Error('usage: sizes <url>');
const TABLES = [
  'memories',
  'lexical_docs',
  'lexical_postings',
  'lexical_stats',
  'lexical_terms',
  'lexical_user_stats',
  'lexical_user_terms',
  'memory_vectors',
  'memory_chunks',
  'memory_history',
  'memory_links',
];
const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  const count = await client.query<{ n: string }>('SELECT count(*)::text AS n FROM memories');
  const memories = Number(count.rows[0]?.n ?? '0');
  if (memories === 0) throw new Error('the database holds no memories');
  let total = 0;
  const lines: string[] = [`memories: ${memories}`];
  for (const table of TABLES) {
    const res = await client.query<{ bytes: string | null; heap: string | null }>(
      'SELECT pg_total_relation_size(to_regclass($1))::text AS bytes, pg_relation_size(to_regclass($1))::text AS heap',
      [table],
    );
    const bytes = Number(res.rows[0]?.bytes ?? '0');
    const heap = Number(res.rows[0]?.heap ?? '0');
    total += bytes;
    lines.push(
      `${table.padEnd(18)} ${(bytes / memories / 1024).toFixed(2)} kB per memory (heap ${(heap / memories / 1024).toFixed(2)}, indexes and TOAST ${((bytes - heap) / memories / 1024).toFixed(2)})`,
    );
  }
  lines.push(`total              ${(total / memories / 1024).toFixed(2)} kB per memory`);
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await client.end();
}
