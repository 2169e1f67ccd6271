/**
 * A recipient as the importer keeps it between its passes (endpoints.decided): a JSON array by position. Moved from
 * import.ts.
 */
import { AttributeSource, EndpointLocation, EndpointRecipient } from "./endpoints";

/**
 * A recipient as stored between the passes:
 * [id, idFrom, email, [timezone, latitude, longitude, postal code, country, from alpha-3 (0|1)], [source, name, value] …].
 */
type PlaceFields = [string, string, string, string, string, 0 | 1];
export type RecipientFields = [
  string,
  EndpointRecipient["idFrom"],
  string,
  PlaceFields,
  ...[AttributeSource, string, string][],
];

export function recipientFields(r: EndpointRecipient): RecipientFields {
  const l = r.location;
  return [
    r.id,
    r.idFrom,
    r.email,
    [r.timezone, l.latitude, l.longitude, l.postalCode, l.country, l.countryFromAlpha3 ? 1 : 0],
    ...r.attributes.map((a) => [a.source, a.name, a.value] as [AttributeSource, string, string]),
  ];
}

export function recipientOf(f: RecipientFields): EndpointRecipient {
  const [id, idFrom, email, [timezone, latitude, longitude, postalCode, country, alpha3], ...attributes] = f;
  const location: EndpointLocation = { latitude, longitude, postalCode, country, countryFromAlpha3: alpha3 === 1 };
  return {
    id,
    idFrom,
    email,
    timezone,
    location,
    attributes: attributes.map(([source, name, value]) => ({ source, name, value })),
  };
}
