import Button, { type ButtonProps } from '@mui/material/Button';
import { useRef, type ReactNode } from 'react';

interface FilePickButtonProps extends Omit<ButtonProps, 'onClick' | 'children'> {
  children: ReactNode;
  accept: string;
  /** 'user' or 'environment' opens the phone's camera directly. */
  capture?: 'user' | 'environment';
  onPick: (file: File) => void;
}

/** A real button that opens the file picker (the input itself stays hidden and out of the tab order). */
export function FilePickButton({ children, accept, capture, onPick, ...buttonProps }: FilePickButtonProps) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <Button {...buttonProps} onClick={() => input.current?.click()}>
        {children}
      </Button>
      <input
        ref={input}
        type="file"
        accept={accept}
        capture={capture}
        hidden
        tabIndex={-1}
        aria-hidden="true"
        onChange={(event) => {
          const file = event.target.files?.[0];
          // Cleared so that choosing the same file again still counts as a choice.
          event.target.value = '';
          if (file) onPick(file);
        }}
      />
    </>
  );
}
