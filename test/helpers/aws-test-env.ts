import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp-dir.js';

/**
 * Every AWS test runs with this: no instance metadata (169.254.169.254 is never a target here), and empty shared
 * credentials and config files, so neither the SDK nor the gateway finds the machine's own AWS identity. Applied to
 * process.env at once (the AWS SDK's credential chain reads process.env, not the gateway's env option).
 */
export function isolateAwsEnv(): { readonly dir: string } {
  const dir = tempDir('aws-test');
  const credentials = join(dir, 'credentials');
  const config = join(dir, 'config');
  writeFileSync(credentials, '');
  writeFileSync(config, '');
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_ROLE_ARN', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_BEARER_TOKEN_BEDROCK', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_STS']) {
    delete process.env[name];
  }
  process.env['AWS_EC2_METADATA_DISABLED'] = 'true';
  process.env['AWS_SHARED_CREDENTIALS_FILE'] = credentials;
  process.env['AWS_CONFIG_FILE'] = config;
  return { dir };
}

/** Fixed test identities (AWS's documentation example keys: they sign nothing real). */
export const TEST_AWS_KEYS = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
} as const;

export const TEST_AWS_SESSION = {
  accessKeyId: 'ASIAIOSFODNN7SESSION',
  secretAccessKey: 'je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE-session-token-for-tests//+/ZmFrZQ==',
} as const;
