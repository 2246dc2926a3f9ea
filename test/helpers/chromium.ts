// Headless Chromium for the tests that look at a page: Debian's `chromium` (never a downloaded
// browser), driven by playwright-core. CI installs it (.ci/run); elsewhere a test without it skips.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The browser's path, if one is installed. */
export const chromiumPath = (): string | undefined => CANDIDATES.find((p): p is string => p !== undefined && existsSync(p));

/** Why a browser test cannot run here (undefined: it can). Under CI a missing browser is a failure, not a skip. */
export function noBrowser(): string | undefined {
  if (chromiumPath()) return undefined;
  if (process.env.CI) throw new Error('chromium is not installed: .ci/run installs it (apt-get install chromium)');
  return 'chromium is not installed (apt-get install chromium)';
}

export function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('chromium is not installed');
  return chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
}
