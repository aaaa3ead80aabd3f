import Menu from '@mui/material/Menu';
import MenuItem from '@mui/material/MenuItem';
import { Link as RouterLink } from 'react-router';
import { isAdminRole, type User } from '@portal/contracts';

interface NavMenuProps {
  id: string;
  anchor: HTMLElement | null;
  onClose: () => void;
  user: User | null;
  productName: string | undefined;
  spyOnUrl: string | undefined;
  onLogout: () => void;
}

interface LinkItem {
  label: string;
  to: string;
}

/**
 * The dropdown of the navigation bar, in the order of SPEC section 2. Loaded when the user goes
 * for the menu button (it brings the menu components and the role rule of the shared contracts).
 */
export default function NavMenu({ id, anchor, onClose, user, productName, spyOnUrl, onLogout }: NavMenuProps) {
  const links: LinkItem[] = user
    ? [
        { label: 'Home', to: '/home' },
        { label: 'Evidence', to: '/evidence' },
        ...(isAdminRole(user.role) ? [{ label: 'Admin Page', to: '/admin' }] : []),
        { label: 'Archive', to: '/archive' },
        { label: 'Help', to: '/help' },
      ]
    : [
        { label: 'Home', to: '/home' },
        { label: 'Archive', to: '/archive' },
        { label: 'Register', to: '/registration' },
        { label: 'Login', to: '/login' },
      ];

  return (
    <Menu
      id={id}
      anchorEl={anchor}
      open={anchor !== null}
      onClose={onClose}
      anchorOrigin={{ vertical: 'bottom', horizontal: 'right' }}
      transformOrigin={{ vertical: 'top', horizontal: 'right' }}
      slotProps={{ paper: { sx: { minWidth: 220 } } }}
    >
      {links.map((link) => (
        <MenuItem key={link.to} component={RouterLink} to={link.to} onClick={onClose}>
          {link.label}
        </MenuItem>
      ))}
      {user && spyOnUrl ? (
        <MenuItem component="a" href={spyOnUrl} target="_blank" rel="noopener noreferrer" onClick={onClose}>
          {`Spy on ${productName ?? ''}`.trim()}
        </MenuItem>
      ) : null}
      {user ? (
        <MenuItem
          onClick={() => {
            onClose();
            onLogout();
          }}
        >
          Logout
        </MenuItem>
      ) : null}
    </Menu>
  );
}
