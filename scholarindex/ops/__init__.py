"""Operations: the ``scholarindex`` command and the demo."""
