/** The platform's network failures are read as every upstream's are (@subx/errors). */
export { networkCauseOf, type NetworkCause } from '@subx/errors';
