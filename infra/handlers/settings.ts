/** How a handler reads its settings: one environment variable holding JSON, written by its component. */

/** Environment variable `name` as JSON with every field of `required` set; throws naming what is missing. */
export function settingsFromEnv<T extends object>(
  env: NodeJS.ProcessEnv,
  name: string,
  required: readonly (keyof T & string)[],
): T {
  let settings: T;
  try {
    settings = JSON.parse(env[name] ?? "");
  } catch {
    throw new Error(`environment ${name} is missing or not JSON`);
  }
  if (!settings || required.some((k) => !settings[k])) {
    const fields = `${required.slice(0, -1).join(", ")} or ${required[required.length - 1]}`;
    throw new Error(`environment ${name} lacks ${fields}`);
  }
  return settings;
}
