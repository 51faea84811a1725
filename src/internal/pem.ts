/**
 * PEM certificates given as one text or several, as a list; `undefined` is none (an unset
 * environment variable asks for nothing).
 *
 * @throws TypeError naming the option (`name`) when one is not PEM certificate text.
 */
export function pemCertificates(value: string | string[] | undefined, name: string): string[] {
  const certificates = value === undefined ? [] : Array.isArray(value) ? value : [value];
  if (certificates.some((text) => typeof text !== "string" || !text.includes("-----BEGIN"))) {
    throw new TypeError(`${name} must be PEM certificate text (-----BEGIN CERTIFICATE-----...).`);
  }
  return certificates;
}
