/** An upstream stream event larger than the gateway may hold, whatever the stream's framing. */
export class EventTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`an upstream event exceeded ${limit} characters`);
    this.name = 'EventTooLargeError';
  }
}
