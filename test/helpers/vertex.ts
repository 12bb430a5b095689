import type { KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp-dir.js';

/** Vertex AI's path for a project and region; the tests put a Gemini mock behind it. */
export const VERTEX_PATH = '/v1/projects/demo-project/locations/us-central1/publishers/google';

/** One Vertex provider with `auth: google` (its base URL from VERTEX_BASE_URL) and one model on it. */
export const VERTEX_ROUTES = `version: 1
providers:
  vertex:
    dialect: gemini
    base_url: https://us-central1-aiplatform.googleapis.com${VERTEX_PATH}
    base_url_env: VERTEX_BASE_URL
    auth: google
models:
  vertex/gemini-2.5-flash: { max_output_tokens: 65536, reasoning: budget }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

/** A service-account key file (for GOOGLE_APPLICATION_CREDENTIALS) with this private key, whose token_uri is `tokenUri`. */
export function serviceAccountKeyFile(privateKey: KeyObject, tokenUri: string): string {
  const keyFile = join(tempDir('gemini-sa'), 'service-account.json');
  writeFileSync(keyFile, JSON.stringify({
    type: 'service_account', project_id: 'demo-project', private_key_id: 'key-1', client_email: 'gateway@demo-project.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), token_uri: tokenUri,
  }));
  return keyFile;
}
