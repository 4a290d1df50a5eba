/** Build identity. The build script replaces the __IK_*__ identifiers with `bun build --define`. */
declare const __IK_VERSION__: string | undefined;
declare const __IK_GIT_REV__: string | undefined;
declare const __IK_TARGET__: string | undefined;

/** ik's semantic version. */
export const VERSION: string = typeof __IK_VERSION__ === "string" ? __IK_VERSION__ : "0.1.0";
/** The git revision the binary was built from ("source" when running from a checkout). */
export const GIT_REV: string = typeof __IK_GIT_REV__ === "string" ? __IK_GIT_REV__ : "source";
/** The compile target (e.g. bun-linux-x64), or "source". */
export const BUILD_TARGET: string = typeof __IK_TARGET__ === "string" ? __IK_TARGET__ : "source";
