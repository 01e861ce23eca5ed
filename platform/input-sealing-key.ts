import type { CoreV1Api } from '@kubernetes/client-node'
import { SECRET_OBJECTS, SecretEntries } from './secret-entries.js'
import { installationKeyOf, newInstallationKey } from './sealed-input.js'

/** The entry of the signing Secret that holds the installation's input sealing key. */
export const INPUT_SEALING_ENTRY = 'inputSealing'
/**
 * The entry the operator's leader writes once it runs jobs whose input rides with them, sealed
 * (docs/adr/0043): until then (an operator of an earlier release still leading, mid-upgrade) the
 * gateway stores every input in the bucket, which every operator reads.
 */
export const SEALED_INPUTS_ENTRY = 'sealedInputs'

/**
 * The installation's input sealing key (docs/adr/0042), read from its Secret entry once and kept:
 * the gateway makes it on first use (`make`), the operator only reads it. A failed read is not
 * kept, so the next job asks again.
 */
export class InputSealingKey {
  private loaded: Promise<Buffer> | undefined
  private operatorTakesSealed = false

  constructor(
    private readonly entries: Pick<SecretEntries, 'get' | 'setIfAbsent' | 'write'>,
    private readonly mode: 'make' | 'read',
  ) {}

  static of(core: CoreV1Api, namespace: string, mode: 'make' | 'read', name: string = SECRET_OBJECTS.signing) {
    return new InputSealingKey(new SecretEntries(core, namespace, name), mode)
  }

  key(): Promise<Buffer> {
    this.loaded ??= this.load().catch((err: unknown) => {
      this.loaded = undefined
      throw err
    })
    return this.loaded
  }

  /**
   * The gateway: whether the operator runs jobs whose input rides with them. Once its leader said
   * so, kept; until then asked again at each job (one read of the Secret), and a failed read is a
   * no: the input is stored, as every operator reads it.
   */
  async operatorTakesSealedInputs(): Promise<boolean> {
    if (this.operatorTakesSealed) return true
    this.operatorTakesSealed = await this.entries.get(SEALED_INPUTS_ENTRY).then(
      (v) => v !== null,
      () => false,
    )
    return this.operatorTakesSealed
  }

  /**
   * The operator's leader: says it runs jobs whose input rides with them (once it leads, so no
   * earlier leader still acts). A merge patch of the one entry: the operator may patch the
   * signing Secret, not replace it.
   */
  async announceSealedInputs(): Promise<void> {
    await this.entries.write({ [SEALED_INPUTS_ENTRY]: 'v1' })
  }

  private async load(): Promise<Buffer> {
    const stored =
      this.mode === 'make'
        ? await this.entries.setIfAbsent(INPUT_SEALING_ENTRY, newInstallationKey())
        : await this.entries.get(INPUT_SEALING_ENTRY)
    if (!stored) throw new Error('the input sealing key does not exist yet')
    return installationKeyOf(stored)
  }
}
