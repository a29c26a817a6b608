;;; Guile's compiler compiling some of Guile's own installed modules, for
;;; the drop-in test harness and benchmark (scripts/dropin/run-tests.sh,
;;; mosaic-bench's guile cases). Each argument is a module's path under
;;; Guile's source directory without ".scm" (e.g. "ice-9/boot-9"); its
;;; output goes to the current directory as that path with "/" turned
;;; into "-" and ".go" appended. The outputs are compared byte for byte
;;; between collectors by the caller.
;;;
;;; Run: guile --no-auto-compile compile.scm MODULE...

(use-modules (system base compile)
             (ice-9 string-fun))

(define source-dir
  (or (getenv "GUILE_SOURCE_DIR")
      (string-append (%package-data-dir) "/" (effective-version))))

(for-each
 (lambda (module)
   (let ((in (string-append source-dir "/" module ".scm"))
         (out (string-append (getcwd) "/"
                             (string-map (lambda (c) (if (char=? c #\/) #\- c)) module)
                             ".go")))
     (compile-file in #:output-file out)
     (format #t "compiled ~a~%" module)))
 (cdr (command-line)))
