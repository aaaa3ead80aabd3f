export interface Author {
  userId: string;
  username: string;
  avatarUrl: string | null;
}

/**
 * The evidence service's own copy of who its authors are (username, avatar), kept current from
 * identity's user.registered and user.updated events, so that items show their author without
 * asking identity.
 */
export interface AuthorDirectory {
  find(userId: string): Promise<Author | null>;
  upsert(author: Author): Promise<void>;
  remove(userId: string): Promise<void>;
}
