import { tierConfig } from './vitest.shared.ts';

export default tierConfig('perf');
