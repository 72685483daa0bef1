/** How the browser tests start Debian's Chromium: headless, sandbox off (root), and nothing phoning home. */
import { existsSync } from 'node:fs';

/** Debian's Chromium (`apt-get install chromium`); the tests never download a browser of their own. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The launch options playwright-core's `chromium.launch` takes. */
export interface ChromiumLaunchOptions {
  readonly executablePath: string;
  readonly headless: true;
  readonly args: string[];
}

/**
 * Launch options for Debian's Chromium, or a clear error when it is not installed. The flags keep it from
 * reaching the network on its own (this machine has none), which otherwise floods the log with refused
 * connections and slows every start.
 */
export function chromiumLaunchOptions(): ChromiumLaunchOptions {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}: the browser test needs Debian's chromium (apt-get install -y chromium).`,
    );
  }
  return {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  };
}
