import { describe, expect, it } from 'vitest';
import { canMergeFacts, contradiction, cosineSimilarity, tokenJaccard } from './fact-merge.js';

describe('canMergeFacts', () => {
  it('keeps facts that differ in a number apart', () => {
    expect(canMergeFacts('The dev server runs on port 8080', 'The dev server runs on port 3000')).toEqual({
      ok: false,
      reason: 'number',
    });
    expect(canMergeFacts('Keep three replicas', 'Keep five replicas')).toEqual({
      ok: false,
      reason: 'number',
    });
    expect(canMergeFacts('保留三个副本', '保留五个副本')).toEqual({ ok: false, reason: 'number' });
    expect(canMergeFacts('Timeout is 1,000 ms', 'Timeout is 1000 ms')).toEqual({ ok: true });
  });

  it('keeps a fact and its negation apart', () => {
    expect(canMergeFacts('use pnpm', "don't use pnpm")).toEqual({ ok: false, reason: 'negation' });
    expect(canMergeFacts('Use pnpm', 'Never use pnpm')).toEqual({ ok: false, reason: 'negation' });
    expect(canMergeFacts('Deploy with tests', 'Deploy without tests')).toEqual({
      ok: false,
      reason: 'negation',
    });
    expect(canMergeFacts('Use pnpm', 'Don’t use pnpm')).toEqual({ ok: false, reason: 'negation' });
    expect(canMergeFacts('使用 pnpm', '不要使用 pnpm')).toEqual({ ok: false, reason: 'negation' });
    expect(canMergeFacts('别用 npm', '用 npm')).toEqual({ ok: false, reason: 'negation' });
  });

  it('keeps facts about different named entities apart', () => {
    expect(canMergeFacts('The user prefers English', 'The user prefers Spanish')).toEqual({
      ok: false,
      reason: 'entity',
    });
    expect(canMergeFacts('Config lives in src/config.ts', 'Config lives in src/settings.ts')).toEqual({
      ok: false,
      reason: 'entity',
    });
  });

  it('keeps Chinese facts about different named things apart', () => {
    expect(canMergeFacts('用户偏好英语', '用户偏好西班牙语')).toEqual({ ok: false, reason: 'entity' });
    expect(canMergeFacts('数据库部署在北京机房', '数据库部署在上海机房')).toEqual({
      ok: false,
      reason: 'entity',
    });
    expect(canMergeFacts('使用 pnpm 安装依赖', '使用 yarn 安装依赖')).toEqual({
      ok: false,
      reason: 'entity',
    });
    expect(canMergeFacts('服务部署到 AWS', '服务部署到 GCP')).toEqual({ ok: false, reason: 'entity' });
    expect(canMergeFacts('开发服务器监听 8080 端口', '开发服务器监听 3000 端口')).toEqual({
      ok: false,
      reason: 'number',
    });
    expect(canMergeFacts('一定要使用 pnpm', '一定不要使用 pnpm')).toEqual({ ok: false, reason: 'negation' });
  });

  it('lets a Chinese fact merge when only particles, punctuation, spacing or case differ', () => {
    expect(canMergeFacts('用户喜欢简洁的回答。', '用户喜欢简洁回答')).toEqual({ ok: true });
    expect(canMergeFacts('使用 pnpm 安装依赖', '使用 PNPM 安装了依赖')).toEqual({ ok: true });
  });

  it('does not count a re-cased word as a different entity', () => {
    expect(canMergeFacts('The user prefers English', 'the user prefers english')).toEqual({ ok: true });
  });

  it('lets a reworded fact merge: sentence-initial capitals and plurals are not entities', () => {
    expect(canMergeFacts('uses pnpm for installs', 'uses pnpm for install')).toEqual({ ok: true });
    expect(canMergeFacts('Uses pnpm for installs.', 'uses pnpm for install')).toEqual({ ok: true });
    expect(
      canMergeFacts(
        'The user prefers English. Replies are short',
        'the user prefers English; replies are short',
      ),
    ).toEqual({ ok: true });
  });
});

describe('similarity measures', () => {
  it('computes token Jaccard with plural folding and CJK bigrams', () => {
    expect(tokenJaccard('uses pnpm for installs', 'uses pnpm for install')).toBe(1);
    expect(tokenJaccard('alpha beta', 'beta gamma')).toBeCloseTo(1 / 3, 12);
    expect(tokenJaccard('数据库备份', '数据库恢复')).toBeCloseTo(2 / 6, 12);
    expect(tokenJaccard('', 'x')).toBe(0);
  });

  it('computes cosine similarity and treats zero vectors as unrelated', () => {
    const a = Float32Array.from([1, 0, 0]);
    const b = Float32Array.from([1, 1, 0]);
    expect(cosineSimilarity(a, b)).toBeCloseTo(Math.SQRT1_2, 6);
    expect(cosineSimilarity(a, new Float32Array(3))).toBe(0);
    expect(cosineSimilarity(a, new Float32Array(2))).toBe(0);
  });
});

describe('contradiction', () => {
  it('links facts on the same subject that differ in a value', () => {
    expect(contradiction('the API listens on port 8080', 'the API listens on port 9090')).toBe('number');
    expect(contradiction('Use pnpm for installs', "Don't use pnpm for installs")).toBe('negation');
    expect(contradiction('The user prefers English replies', 'The user prefers Spanish replies')).toBe(
      'entity',
    );
    expect(contradiction('The config lives in src/a.ts', 'The config lives in src/b.ts')).toBe('entity');
  });

  it('never links facts about different subjects, near duplicates or CJK text', () => {
    expect(
      contradiction('the web API listens on port 8080', 'the admin API listens on port 9090'),
    ).toBeNull();
    expect(contradiction('the API listens on port 8080', 'the API listens on port 8080.')).toBeNull();
    expect(contradiction('the API listens on port 8080', 'the database backs up at 3 am')).toBeNull();
    expect(contradiction('port 8080', 'port 9090')).toBeNull();
    expect(contradiction('API 端口是 8080', 'API 端口是 9090')).toBeNull();
  });
});
