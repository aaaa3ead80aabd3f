import { useInfiniteQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { FIRST_USERS_PAGE, fetchUsersPage } from '../../api/admin';

export const ADMIN_USERS_KEY = ['admin-users'] as const;

/** All users, oldest first, a page at a time (the next page from the Link header). */
export function useAdminUsers() {
  const query = useInfiniteQuery({
    queryKey: ADMIN_USERS_KEY,
    queryFn: ({ pageParam, signal }) => fetchUsersPage(pageParam, signal),
    initialPageParam: FIRST_USERS_PAGE,
    getNextPageParam: (last) => last.next ?? undefined,
  });
  const users = useMemo(() => query.data?.pages.flatMap((page) => page.items) ?? [], [query.data]);
  return { ...query, users };
}
