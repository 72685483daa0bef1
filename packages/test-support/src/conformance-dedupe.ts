/**
 * The conformance suite of the store port, part six: an exact duplicate is never stored twice — at most one
 * active row per agent, kind and content hash (events excepted). Inserts find the duplicate instead of storing
 * it; updates and lifecycle moves that would make a second one are refused.
 */
import { describe, expect, it } from 'vitest';
import { type ConformanceOpen, type ConformancePort, withPort } from './conformance-port.js';

/** Every stored row, whatever its lifecycle. */
async function stored(s: ConformancePort): Promise<number> {
  const h = await s.health();
  if (!h.ok) throw new Error('health failed');
  return h.health.totals.memories;
}

/** Registers the exact-duplicate part of the suite. */
export function describeDedupeConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: exact duplicates`, () => {
    it(
      'an insert of an active duplicate stores nothing and gives the existing row back',
      withPort(
        open,
        async (s, clock) => {
          const first = await s.insertUniqueMemory({
            agentId: 'a',
            kind: 'fact',
            content: 'Deploys run on Fridays',
          });
          expect(first.created).toBe(true);
          clock.set(2_000);
          // The same text after normalisation (case, spacing) is the same content hash.
          const again = await s.insertUniqueMemory({
            agentId: 'a',
            kind: 'fact',
            content: '  deploys RUN on   fridays ',
            tags: ['topic:ops'],
          });
          expect(again).toEqual({ created: false, record: first.record });
          expect(
            await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'Deploys run on Fridays' }),
          ).toEqual(first.record);
          // Another kind, another agent and an archived original are not duplicates.
          expect(
            (
              await s.insertUniqueMemory({
                agentId: 'a',
                kind: 'semantic',
                content: 'Deploys run on Fridays',
              })
            ).created,
          ).toBe(true);
          expect(
            (await s.insertUniqueMemory({ agentId: 'b', kind: 'fact', content: 'Deploys run on Fridays' }))
              .created,
          ).toBe(true);
          await s.archiveMemory('a', first.record.id);
          const revived = await s.insertUniqueMemory({
            agentId: 'a',
            kind: 'fact',
            content: 'Deploys run on Fridays',
          });
          expect(revived.created).toBe(true);
          expect(revived.record.id).not.toBe(first.record.id);
          const active = await s.listMemories('a', { lifecycles: ['active'], kinds: ['fact'] });
          expect(active.map((r) => r.id)).toEqual([revived.record.id]);
          expect(await stored(s)).toBe(4);
        },
        { start: 1_000 },
      ),
    );

    it(
      'concurrent inserts of one text store one row',
      withPort(open, async (s) => {
        const racing = await Promise.all(
          Array.from({ length: 6 }, () =>
            s.insertUniqueMemory({ agentId: 'a', kind: 'fact', content: 'racing text' }),
          ),
        );
        expect(racing.filter((r) => r.created)).toHaveLength(1);
        expect(new Set(racing.map((r) => r.record.id)).size).toBe(1);
        expect(await stored(s)).toBe(1);
      }),
    );

    it(
      'events are archival history: the same text at two seqs is two rows',
      withPort(open, async (s) => {
        const a = await s.insertUniqueMemory({
          agentId: 'a',
          kind: 'event',
          content: 'ok',
          seqFrom: 1,
          seqTo: 1,
        });
        const b = await s.insertUniqueMemory({
          agentId: 'a',
          kind: 'event',
          content: 'ok',
          seqFrom: 2,
          seqTo: 2,
        });
        expect([a.created, b.created]).toEqual([true, true]);
        expect(a.record.id).not.toBe(b.record.id);
        await s.insertMemory({ agentId: 'a', kind: 'event', content: 'ok' });
        expect(await s.listMemories('a', { kinds: ['event'] })).toHaveLength(3);
      }),
    );

    it(
      'a batch stores each distinct text once: duplicates inside it and of stored rows give that row',
      withPort(open, async (s) => {
        const kept = await s.insertMemory({
          agentId: 'a',
          kind: 'fact',
          content: 'The cache holds 512 entries',
        });
        const records = await s.insertMemories([
          { agentId: 'a', kind: 'fact', content: 'Backups run nightly' },
          { agentId: 'a', kind: 'fact', content: 'backups run NIGHTLY' },
          { agentId: 'a', kind: 'fact', content: 'The cache holds 512 entries' },
        ]);
        expect(records[1]).toEqual(records[0]);
        expect(records[2]).toEqual(kept);
        expect(await stored(s)).toBe(2);
        expect((await s.searchLexical({ agentId: 'a', terms: ['backups'], limit: 10 })).hits).toHaveLength(1);
      }),
    );

    it(
      'a long (chunked) memory is stored once',
      withPort(open, async (s) => {
        const content = Array.from(
          { length: 40 },
          (_, i) => `Paragraph ${i} of the runbook explains step ${i}.`,
        ).join('\n\n');
        const first = await s.insertUniqueMemory({ agentId: 'a', kind: 'episodic', content });
        const chunks = (await s.listPendingEmbeddings({ limit: 100 })).length;
        expect(chunks).toBeGreaterThan(1);
        const again = await s.insertUniqueMemory({ agentId: 'a', kind: 'episodic', content });
        expect(again).toEqual({ created: false, record: first.record });
        expect(await s.listPendingEmbeddings({ limit: 100 })).toHaveLength(chunks);
        expect(await stored(s)).toBe(1);
      }),
    );

    it(
      'an update or a lifecycle move that would make a second active duplicate is refused, changing nothing',
      withPort(open, async (s) => {
        const a = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'The port is 8080' });
        const b = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'The port is 9090' });
        await expect(
          s.updateMemory('a', b.id, b.revision, { content: 'the port is 8080' }),
        ).rejects.toMatchObject({
          code: 'ENGRAM_STORE_CONFLICT',
        });
        const sem = await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'The port is 8080' });
        await expect(s.updateMemory('a', sem.id, sem.revision, { kind: 'fact' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_CONFLICT',
        });
        expect(await s.getMemory('a', b.id)).toEqual(b);
        expect(await s.getMemory('a', sem.id)).toEqual(sem);
        // A row archived while its twin was stored cannot come back to active beside it.
        const archived = await s.archiveMemory('a', a.id);
        const twin = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'The port is 8080' });
        await expect(s.setLifecycle('a', a.id, archived.revision, 'active')).rejects.toMatchObject({
          code: 'ENGRAM_STORE_CONFLICT',
        });
        await expect(
          s.updateMemory('a', a.id, archived.revision, { lifecycle: 'active' }),
        ).rejects.toMatchObject({
          code: 'ENGRAM_STORE_CONFLICT',
        });
        expect(await s.getMemory('a', a.id)).toEqual(archived);
        // Once the twin is gone, it can.
        await s.archiveMemory('a', twin.id);
        expect((await s.setLifecycle('a', a.id, archived.revision, 'active')).lifecycle).toBe('active');
      }),
    );

    it(
      'supersede: a replacement with the old text is a new row; one that duplicates another row links to it',
      withPort(open, async (s) => {
        const old = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'Release on Monday' });
        const other = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'Release on Tuesday' });
        const same = await s.supersedeMemory('a', old.id, old.revision, {
          agentId: 'a',
          kind: 'fact',
          content: 'Release on Monday',
        });
        expect(same.replacement.id).not.toBe(old.id);
        expect(same.superseded).toMatchObject({ lifecycle: 'superseded', supersededBy: same.replacement.id });
        const linked = await s.supersedeMemory('a', same.replacement.id, same.replacement.revision, {
          agentId: 'a',
          kind: 'fact',
          content: 'release on TUESDAY',
        });
        expect(linked.replacement).toEqual(other);
        expect(linked.superseded).toMatchObject({ lifecycle: 'superseded', supersededBy: other.id });
        expect(await s.getMemory('a', same.replacement.id)).toEqual(linked.superseded);
        expect(await stored(s)).toBe(3);
      }),
    );
  });
}
