/** An in-memory Lease with the apiserver's optimistic concurrency, shared by several electors in one test. */
import { ConflictError, TransportError } from "../../../kube/errors.ts";
import type { LeaseClient, LeaseRecord, StoredLease } from "../../../operator/runtime/leader-election.ts";

/** One participant's view of the store; `down` makes its calls fail like an unreachable apiserver. */
export class FakeLeaseClient implements LeaseClient {
  down = false;
  private readonly store: FakeLeaseStore;
  private readonly participant: string;

  constructor(store: FakeLeaseStore, participant: string) {
    this.store = store;
    this.participant = participant;
  }

  async get(): Promise<StoredLease | undefined> {
    this.check();
    return this.store.current;
  }

  async create(record: LeaseRecord): Promise<StoredLease> {
    this.check();
    if (this.store.current) throw new ConflictError(409, "leases.coordination.k8s.io already exists", "AlreadyExists");
    return this.store.write(this.participant, record);
  }

  async update(record: LeaseRecord, resourceVersion: string): Promise<StoredLease> {
    this.check();
    if (this.store.current?.resourceVersion !== resourceVersion) {
      throw new ConflictError(409, "the object has been modified", "Conflict");
    }
    return this.store.write(this.participant, record);
  }

  private check(): void {
    if (this.down) throw new TransportError(0, "connect ECONNREFUSED");
  }
}

export class FakeLeaseStore {
  current: StoredLease | undefined;
  readonly writes: { by: string; record: LeaseRecord }[] = [];
  private version = 0;

  client(participant: string): FakeLeaseClient {
    return new FakeLeaseClient(this, participant);
  }

  write(by: string, record: LeaseRecord): StoredLease {
    this.current = { record, resourceVersion: String(++this.version) };
    this.writes.push({ by, record });
    return this.current;
  }
}
