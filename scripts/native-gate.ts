// Global setup of the native, eval and perf tiers: a missing native capability fails the run with a
// message naming it. There is no skip path: without ENGRAM_REQUIRE_NATIVE=1 the failure is the same.
import { checkNativeCapabilities } from '../packages/store-sqlite/dist/index.js';

export default function nativeGate(): void {
  const report = checkNativeCapabilities();
  if (!report.ok) {
    const flag = process.env.ENGRAM_REQUIRE_NATIVE === '1' ? 'ENGRAM_REQUIRE_NATIVE=1' : 'native tier';
    throw new Error(
      `[${flag}] native capabilities missing: ${report.missing.join(', ')}\n${report.details.join('\n')}`,
    );
  }
}
