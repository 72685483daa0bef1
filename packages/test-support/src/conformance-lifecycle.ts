/**
 * The conformance suite of the store port, part eight: what maintenance needs from a store — a merge that
 * supersedes every source with lineage or writes nothing, archived rows found again on request, the import
 * time of backdated rows, and pending rows listed by id.
 */
import { describe, expect, it } from 'vitest';
import { type ConformanceOpen, withPort } from './conformance-port.js';

const note = (content: string) => ({ agentId: 'a', kind: 'semantic' as const, content });

/** Registers the maintenance part of the suite. */
export function describeLifecycleConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: mergeMemories`, () => {
    it(
      'supersedes every source by the merged row, each with its lineage',
      withPort(
        open,
        async (s, clock) => {
          const rows = await s.insertMemories([note('alpha one'), note('alpha two'), note('alpha three')]);
          clock.set(clock.now() + 10);
          const { merged, superseded } = await s.mergeMemories(
            'a',
            rows.map((r) => ({ id: r.id, expectedRevision: r.revision })),
            { ...note('alpha'), tags: ['source:merge'] },
          );
          expect(superseded.map((r) => [r.id, r.lifecycle, r.supersededBy, r.revision])).toEqual(
            rows.map((r) => [r.id, 'superseded', merged.id, 2]),
          );
          for (const r of rows) {
            expect(await s.getMemory('a', r.id)).toMatchObject({
              lifecycle: 'superseded',
              supersededBy: merged.id,
            });
          }
          expect(await s.getMemory('a', merged.id)).toMatchObject({ lifecycle: 'active', content: 'alpha' });
        },
        { start: 1_000_000 },
      ),
    );

    it(
      'a merged text equal to one source is stored as the new row; one equal to another active row reuses it',
      withPort(
        open,
        async (s) => {
          const [a, b] = await s.insertMemories([note('delta one'), note('delta two')]);
          const same = await s.mergeMemories(
            'a',
            [
              { id: a?.id ?? '', expectedRevision: 1 },
              { id: b?.id ?? '', expectedRevision: 1 },
            ],
            note('delta one'),
          );
          expect(same.merged.id).not.toBe(a?.id);
          expect(same.superseded.map((r) => r.supersededBy)).toEqual([same.merged.id, same.merged.id]);
          const [c, d, other] = await s.insertMemories([note('eps one'), note('eps two'), note('eps')]);
          const reused = await s.mergeMemories(
            'a',
            [
              { id: c?.id ?? '', expectedRevision: 1 },
              { id: d?.id ?? '', expectedRevision: 1 },
            ],
            note('eps'),
          );
          expect(reused.merged.id).toBe(other?.id);
          for (const id of [c?.id, d?.id]) {
            expect(await s.getMemory('a', id ?? '')).toMatchObject({
              lifecycle: 'superseded',
              supersededBy: other?.id,
            });
          }
        },
        { start: 1_000_000 },
      ),
    );

    it(
      'writes nothing when one source changed meanwhile',
      withPort(
        open,
        async (s) => {
          const [a, b] = await s.insertMemories([note('beta one'), note('beta two')]);
          await s.updateMemory('a', b?.id ?? '', 1, { importance: 0.9 });
          await expect(
            s.mergeMemories(
              'a',
              [
                { id: a?.id ?? '', expectedRevision: 1 },
                { id: b?.id ?? '', expectedRevision: 1 },
              ],
              note('beta'),
            ),
          ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
          expect(await s.listMemories('a', { limit: 10 })).toHaveLength(2);
          expect(await s.getMemory('a', a?.id ?? '')).toMatchObject({ lifecycle: 'active', revision: 1 });
        },
        { start: 1_000_000 },
      ),
    );

    it(
      'refuses fewer than two sources or a repeated one',
      withPort(
        open,
        async (s) => {
          const [a] = await s.insertMemories([note('gamma')]);
          const one = { id: a?.id ?? '', expectedRevision: 1 };
          await expect(s.mergeMemories('a', [one], note('x'))).rejects.toMatchObject({
            code: 'ENGRAM_STORE_INVALID_INPUT',
          });
          await expect(s.mergeMemories('a', [one, one], note('x'))).rejects.toMatchObject({
            code: 'ENGRAM_STORE_INVALID_INPUT',
          });
          expect(await s.listMemories('a', { limit: 10 })).toHaveLength(1);
        },
        { start: 1_000_000 },
      ),
    );
  });

  describe(`store port conformance: ${name}: archived rows on request`, () => {
    it(
      'lexical search and revalidation return archived rows only with includeArchived',
      withPort(
        open,
        async (s) => {
          const row = await s.insertMemory(note('the deploy script lives in tools/deploy.sh'));
          await s.archiveMemory('a', row.id);
          const query = { agentId: 'a', terms: ['deploy'], limit: 10 };
          expect((await s.searchLexical(query)).hits).toHaveLength(0);
          expect((await s.searchLexical({ ...query, includeArchived: true })).hits.map((h) => h.id)).toEqual([
            row.id,
          ]);
          const all = await s.searchLexical({ ...query, mode: 'all', includeArchived: true });
          expect(all.hits.map((h) => h.id)).toEqual([row.id]);
          expect(await s.revalidate('a', [{ id: row.id }])).toEqual([]);
          expect((await s.revalidate('a', [{ id: row.id }], { includeArchived: true }))[0]?.lifecycle).toBe(
            'archived',
          );
          await expect(
            s.searchLexical({ ...query, includeArchived: 'yes' as unknown as boolean }),
          ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        },
        { start: 1_000_000 },
      ),
    );
  });

  describe(`store port conformance: ${name}: brief revalidation`, () => {
    it(
      'revalidateBrief returns the rows revalidate returns, in the same order, with the fields ranking reads',
      withPort(
        open,
        async (s) => {
          const revalidateBrief = s.revalidateBrief?.bind(s);
          expect(revalidateBrief).toBeTypeOf('function');
          if (revalidateBrief === undefined) return;
          const kept = await s.insertMemory({
            ...note('kept row about the deploy'),
            tags: ['topic:deploy', 'area:b'],
            importance: 0.8,
            userId: 'u1',
            sessionId: 's1',
            seqFrom: 4,
            seqTo: 6,
          });
          const edited = await s.insertMemory(note('edited row'));
          await s.updateMemory('a', edited.id, edited.revision, { content: 'edited row, second revision' });
          const archived = await s.insertMemory(note('archived row'));
          await s.archiveMemory('a', archived.id);
          const gone = await s.insertMemory(note('deleted row'));
          await s.deleteMemory('a', gone.id);
          const other = await s.insertMemory({ ...note('row of another agent'), agentId: 'b' });
          const candidates = [
            { id: edited.id, revision: edited.revision },
            { id: kept.id, revision: kept.revision },
            { id: edited.id },
            { id: archived.id },
            { id: gone.id },
            { id: other.id },
            { id: 'missing-row' },
            { id: kept.id },
          ];
          const fields = [
            'id',
            'kind',
            'revision',
            'importance',
            'tags',
            'createdAt',
            'updatedAt',
            'sessionId',
            'seqFrom',
            'seqTo',
            'validFrom',
          ] as const;
          for (const options of [undefined, { includeArchived: true }, { asOf: 5_000_000 }]) {
            const full = await s.revalidate('a', candidates, options);
            const brief = await revalidateBrief('a', candidates, options);
            const projected = full.map((r) => {
              const row = r as unknown as Readonly<Record<string, unknown>>;
              return Object.fromEntries(fields.map((f) => [f, row[f]]));
            });
            expect(brief).toEqual(projected);
          }
          expect((await revalidateBrief('a', candidates)).map((r) => [r.id, r.revision])).toEqual([
            [kept.id, 1],
            [edited.id, 2],
          ]);
          await expect(revalidateBrief('', candidates)).rejects.toMatchObject({
            code: 'ENGRAM_STORE_INVALID_INPUT',
          });
        },
        { start: 1_000_000 },
      ),
    );
  });

  describe(`store port conformance: ${name}: sessionNeighbours`, () => {
    it(
      'returns the current rows of each session window once, ordered, under the read rules',
      withPort(open, async (s) => {
        const read = s.sessionNeighbours?.bind(s);
        expect(read).toBeTypeOf('function');
        if (read === undefined) return;
        const turn = (sessionId: string, seqFrom: number, seqTo = seqFrom, extra = {}) => ({
          ...note(`turn ${sessionId} ${seqFrom}-${seqTo}`),
          sessionId,
          seqFrom,
          seqTo,
          ...extra,
        });
        const rows = await s.insertMemories([
          turn('s1', 1),
          turn('s1', 2),
          turn('s1', 3),
          turn('s1', 4, 6),
          turn('s1', 9),
          turn('s2', 2),
          turn('s1', 3, 3, { userId: 'u2' }),
          { ...note('no position'), sessionId: 's1' },
          { ...turn('s1', 2), agentId: 'b' },
        ]);
        const [t1, t2, t3, t46, , s22, other] = rows;
        await s.archiveMemory('a', (t1 as { id: string }).id);
        const view = (
          list: readonly { sessionId: string | null; seqFrom: number | null; seqTo: number | null }[],
        ) => list.map((r) => [r.sessionId, r.seqFrom, r.seqTo]);
        const windows = [
          { sessionId: 's1', from: 1, to: 3 },
          { sessionId: 's2', from: 1, to: 3 },
          { sessionId: 's1', from: 5, to: 5 },
          { sessionId: 's1', from: 2, to: 4 },
        ];
        // Archived t1 is left out; t46 overlaps both 2..4 and 5..5 and comes once; s1/9 and the row without a
        // position never match; another agent's row never does.
        expect(view(await read('a', windows))).toEqual([
          ['s1', 2, 2],
          ['s1', 3, 3],
          ['s1', 3, 3],
          ['s1', 4, 6],
          ['s2', 2, 2],
        ]);
        expect((await read('a', windows, { forUser: 'u1' })).map((r) => r.id)).not.toContain(
          (other as { id: string }).id,
        );
        expect((await read('a', windows, { includeArchived: true })).map((r) => r.id)).toContain(
          (t1 as { id: string }).id,
        );
        const ids = (await read('a', windows)).map((r) => r.id);
        for (const r of [t2, t3, t46, s22]) expect(ids).toContain((r as { id: string }).id);
        expect(await read('a', [])).toEqual([]);
        for (const bad of [
          { sessionId: '', from: 1, to: 2 },
          { sessionId: 's1', from: 0, to: 2 },
          { sessionId: 's1', from: 3, to: 2 },
        ]) {
          await expect(read('a', [bad])).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        }
      }),
    );
  });

  describe(`store port conformance: ${name}: import time and pending rows by id`, () => {
    it(
      'a backdated row keeps its creation time and records when it was written',
      withPort(
        open,
        async (s) => {
          const row = await s.insertMemory({ ...note('an old message'), createdAt: 5_000 });
          expect(row).toMatchObject({ createdAt: 5_000, updatedAt: 1_000_000 });
          expect(await s.getMemory('a', row.id)).toMatchObject({ createdAt: 5_000, updatedAt: 1_000_000 });
        },
        { start: 1_000_000 },
      ),
    );

    it(
      'lists only the pending rows named',
      withPort(
        open,
        async (s) => {
          const rows = await s.insertMemories([note('one'), note('two'), note('three')]);
          const listed = await s.listPendingEmbeddings({ agentId: 'a', limit: 10, ids: [rows[2]?.id ?? ''] });
          expect(listed.map((p) => p.id)).toEqual([rows[2]?.id]);
        },
        { start: 1_000_000 },
      ),
    );
  });
}
