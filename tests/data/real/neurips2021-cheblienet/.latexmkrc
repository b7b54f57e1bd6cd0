$pdflatex = 'pdflatex --shell-escape %O %S';
